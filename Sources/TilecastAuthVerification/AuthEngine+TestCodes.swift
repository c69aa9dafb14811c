// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

extension AuthEngine {
    /// Issues a code for a fresh verifier from `random`, as the authorize step would for the iOS client
    /// and its callback; returns the code and the verifier.
    func issueTestCode(
        account: AccountID,
        using random: some RandomSource,
        client: ClientID = .tilecastIOS,
        redirectURI: String = FuzzWorld.callback
    ) async throws(IssuanceError) -> (code: String, verifier: String) {
        let verifier = CodeChallenge.makeVerifier(using: random)
        let issued = try await issueCode(
            account: account,
            client: client,
            redirectURI: redirectURI,
            codeChallenge: CodeChallenge.s256(for: verifier).value,
            codeChallengeMethod: "S256",
            scope: "tiles:read"
        )
        return (issued.code.unredactedValue, verifier)
    }
}
