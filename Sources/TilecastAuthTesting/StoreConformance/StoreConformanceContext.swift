// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

/// What a check works with: the fresh store, the records it makes and the way it fails.
struct StoreConformanceContext: Sendable {
    let store: any GrantStore
    let check: String
    let concurrency: Int
    let fixture = StoreFixture()

    /// Fails the check unless `condition` holds.
    func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard condition else { throw StoreConformanceFailure(check: check, message: message()) }
    }

    /// Fails the check unless `value` is present.
    func unwrap<Value>(_ value: Value?, _ message: @autoclosure () -> String) throws -> Value {
        guard let value else { throw StoreConformanceFailure(check: check, message: message()) }
        return value
    }

    /// Runs `operation` from `concurrency` tasks at once and returns every result.
    func concurrently<Result: Sendable>(
        _ operation: @escaping @Sendable (Int) async throws -> Result
    ) async throws -> [Result] {
        try await withThrowingTaskGroup(of: Result.self) { group in
            for index in 0..<concurrency {
                group.addTask { try await operation(index) }
            }
            var results: [Result] = []
            for try await result in group {
                results.append(result)
            }
            return results
        }
    }
}
