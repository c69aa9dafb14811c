// SPDX-License-Identifier: Apache-2.0

/// An ``AccountDirectory`` held in memory, for tests, demos and development servers.
public final class InMemoryAccountDirectory: AccountDirectory, Sendable {
    private let statuses: LockedValue<[AccountID: AccountStatus]>

    /// Creates a directory in which `activeAccounts` are active and every other account is inactive.
    public init(activeAccounts: Set<AccountID> = []) {
        self.statuses = LockedValue(Dictionary(uniqueKeysWithValues: activeAccounts.map { ($0, .active) }))
    }

    /// Sets an account's status.
    public func setStatus(_ status: AccountStatus, of account: AccountID) {
        statuses.withLock { $0[account] = status }
    }

    public func status(of account: AccountID) async throws -> AccountStatus {
        statusNow(of: account)
    }

    /// ``status(of:)`` done under the directory's lock and returned, without suspending: ``AuthEngine``
    /// calls it directly when its directory is this one.
    func statusNow(of account: AccountID) -> AccountStatus {
        statuses.withLock { $0[account] ?? .inactive }
    }
}
