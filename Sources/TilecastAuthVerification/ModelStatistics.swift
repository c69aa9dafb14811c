// SPDX-License-Identifier: Apache-2.0

/// What model-based runs exercised: how many operations, requests by status, and checks made.
public struct ModelStatistics: Sendable, Equatable {
    /// Operations performed.
    public var operations = 0
    /// Endpoint requests sent, by status.
    public var statuses: [Int: Int] = [:]
    /// Grant revocations the model expected and the engine performed.
    public var revocations = 0
    /// Authentication checks of cookies and access tokens against the model.
    public var authenticationChecks = 0
    /// Lookups a remembering instance answered from memory instead of reading the store.
    public var rememberedRecordsUsed = 0
    /// Remembered records a write found changed since: stale records the remembering instances met.
    public var rememberedRecordsFoundStale = 0
    /// Refreshes that succeeded as retries of a concurrent refresh of the same token within the reuse
    /// leeway: in each such burst, the successes after the first.
    public var concurrentRetriesWithinLeeway = 0
    /// Rotations of such bursts that another request's rotation superseded (or that failed): the
    /// bursts' requests raced, rather than ran one after another.
    public var rotationsSupersededInBursts = 0

    public init() {}

    /// The total number of endpoint requests.
    public var requests: Int { statuses.values.reduce(0, +) }

    public static func += (lhs: inout ModelStatistics, rhs: ModelStatistics) {
        lhs.operations += rhs.operations
        lhs.statuses.merge(rhs.statuses, uniquingKeysWith: +)
        lhs.revocations += rhs.revocations
        lhs.authenticationChecks += rhs.authenticationChecks
        lhs.rememberedRecordsUsed += rhs.rememberedRecordsUsed
        lhs.rememberedRecordsFoundStale += rhs.rememberedRecordsFoundStale
        lhs.concurrentRetriesWithinLeeway += rhs.concurrentRetriesWithinLeeway
        lhs.rotationsSupersededInBursts += rhs.rotationsSupersededInBursts
    }
}
