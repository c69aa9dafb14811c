// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

/// The scenarios' account directory: every account is active until a step says otherwise, and the next
/// lookup can be made to fail.
final class ScenarioAccountDirectory: AccountDirectory, Sendable {
    private struct Failure: Error, CustomStringConvertible {
        var description: String { "injected failure of the account directory" }
    }

    private let state = LockedValue((inactive: Set<AccountID>(), failNext: false))

    func setActive(_ active: Bool, _ account: AccountID) {
        state.withLock { state in
            if active {
                state.inactive.remove(account)
            } else {
                state.inactive.insert(account)
            }
        }
    }

    func failNext() {
        state.withLock { $0.failNext = true }
    }

    func status(of account: AccountID) async throws -> AccountStatus {
        let (inactive, fail) = state.withLock { state -> (Bool, Bool) in
            defer { state.failNext = false }
            return (state.inactive.contains(account), state.failNext)
        }
        if fail {
            throw Failure()
        }
        return inactive ? .inactive : .active
    }
}
