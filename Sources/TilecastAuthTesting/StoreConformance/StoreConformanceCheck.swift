// SPDX-License-Identifier: Apache-2.0

/// One rule of the `GrantStore` contract, checked against a fresh store.
///
/// Use ``all`` as the arguments of a parameterised test so each check is reported on its own:
///
/// ```swift
/// @Test(arguments: StoreConformanceCheck.all)
/// func conformance(_ check: StoreConformanceCheck) async throws {
///     try await StoreConformanceKit { clients in try await MyStore.fresh(clients: clients) }.run(check)
/// }
/// ```
public struct StoreConformanceCheck: Sendable, CustomStringConvertible {
    /// What the check proves, as a sentence.
    public let name: String
    let body: @Sendable (StoreConformanceContext) async throws -> Void

    init(_ name: String, _ body: @escaping @Sendable (StoreConformanceContext) async throws -> Void) {
        self.name = name
        self.body = body
    }

    public var description: String { name }

    /// Every check of the kit.
    public static let all: [StoreConformanceCheck] =
        codeChecks + rotationChecks + sessionChecks + sessionRotationChecks
        + revocationChecks + accountRevocationChecks + expiryChecks + keyChecks + rememberedRecordChecks
}
