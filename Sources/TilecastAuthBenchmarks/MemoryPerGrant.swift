// SPDX-License-Identifier: Apache-2.0

import Foundation

/// How much memory one live grant holds in the in-memory store: its grant record, its redeemed code,
/// its access token, its refresh token, its session, and their share of the store's indexes — measured
/// as the growth of resident memory over many grants.
public enum MemoryPerGrant: Sendable {
    /// Bytes per live grant, measured twice.
    public struct Result: Sendable {
        /// As a server receives its requests: each grant for an account of its own, named by a
        /// 36-character id, with the redirect URI and the scope decoded from each request's bytes.
        public var asReceived: Double
        /// With one short account name and one copy of the redirect URI and scope strings for all codes,
        /// as rounds before 2026-12-02 measured.
        public var sharedStrings: Double
    }

    /// Bytes per live grant, each way measured in a fresh process of its own — this program run again with
    /// `arguments(strings)`, which name the number of grants and must make it print ``outputPrefix`` and
    /// the bytes (``measureHere(grants:strings:)``) — so that neither counts memory reused from a world
    /// made before it (measured in one process, the second of two measures came out 12 bytes lower,
    /// whichever it was); `nil` without `/proc`.
    public static func measure(arguments: (RequestStrings) -> [String]) -> Result? {
        func bytes(_ strings: RequestStrings) -> Double? {
            guard let output = Shell.run("/proc/self/exe", arguments(strings)),
                let line = output.split(separator: "\n").last(where: { $0.hasPrefix(outputPrefix) })
            else { return nil }
            return Double(line.dropFirst(outputPrefix.count))
        }
        guard let asReceived = bytes(.asReceived), let sharedStrings = bytes(.shared) else { return nil }
        return Result(asReceived: asReceived, sharedStrings: sharedStrings)
    }

    /// What the measuring process prints before the bytes per grant.
    public static let outputPrefix = "memory_per_grant_bytes="

    /// Bytes per live grant over `count` grants made by code exchanges, measured in this process, or `nil`
    /// without `/proc`.
    public static func measureHere(grants count: Int, strings: RequestStrings) async throws -> Double? {
        let world = try await BenchmarkWorld(liveGrants: 0, strings: strings)
        // Warm up allocator and code paths so that their one-off costs are not counted.
        try await world.populate(1_000)
        guard let before = MemoryProbe.residentBytes() else { return nil }
        try await world.populate(count)
        guard let after = MemoryProbe.residentBytes() else { return nil }
        withExtendedLifetime(world) {}
        return Double(after - before) / Double(count)
    }
}
