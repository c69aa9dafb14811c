// SPDX-License-Identifier: Apache-2.0

import Foundation

/// How much memory one live grant holds in the in-memory store: its grant record, its redeemed code,
/// its access token, its refresh token, its session, and their share of the dictionaries and the expiry
/// queue — measured as the growth of resident memory over many grants.
public enum MemoryPerGrant: Sendable {
    /// Bytes per live grant over `count` grants made by code exchanges, or `nil` without `/proc`.
    public static func measure(grants count: Int) async throws -> Double? {
        let world = try await BenchmarkWorld(liveGrants: 0)
        // Warm up allocator and code paths so that their one-off costs are not counted.
        try await world.populate(1_000)
        guard let before = MemoryProbe.residentBytes() else { return nil }
        try await world.populate(count)
        guard let after = MemoryProbe.residentBytes() else { return nil }
        withExtendedLifetime(world) {}
        return Double(after - before) / Double(count)
    }
}
