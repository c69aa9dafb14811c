// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ExchangeStateMachine {
    /// The code was loaded. Every check that proves possession runs here, before anything is consumed:
    ///
    /// 1. the code exists;
    /// 2. it was issued to the served client (RFC 6749 §4.1.3) — a code of another client is refused and
    ///    not burned;
    /// 3. `redirect_uri` equals the URI stored with it, byte for byte (RFC 6749 §4.1.3, §10.6);
    /// 4. it was stored with an S256 challenge (RFC 7636 §4.3, RFC 9700 §2.1.1);
    /// 5. the verifier's S256 matches, compared in constant time (RFC 7636 §4.6).
    ///
    /// Only then does a used code count as a replay and revoke its grant (OAuth 2.1 §7.5.2: a replay
    /// without valid proof must not let someone holding only the code revoke the victim's grant), and
    /// only then is an expired code refused.
    mutating func codeLoaded(_ code: AuthorizationCode?) -> Action {
        guard case .loadingCode = state else { preconditionFailure("codeLoaded(_:) called in \(state)") }
        guard case .loadingCode(let digest, let redirectURI, let verifierDigest) = takeState() else {
            preconditionFailure(Self.stateChanged)
        }
        guard let code else { return refuse(.codeNotFound) }
        guard code.client == configuration.servedClient else { return refuse(.codeIssuedToAnotherClient) }
        guard redirectURI.equals(code.redirectURI) else {
            return refuse(.redirectURIMismatch)
        }
        guard code.challenge?.s256Digest != nil else { return refuse(.codeWithoutS256Challenge) }
        guard PKCE.verify(verifierDigest: verifierDigest, against: code.challenge) else {
            return refuse(.codeVerifierMismatch)
        }
        if let redemption = code.redemption {
            return revoke(redemption.grant, because: .codeReplayed, refusing: .codeReplayed)
        }
        guard now < code.expiresAt else { return refuse(.codeExpired) }

        state = .checkingCodeAccount(digest, code.client, code.account, code.scope)
        return .checkAccount(code.account)
    }

    /// The redemption ran. Exactly one of any number of concurrent exchanges of a code gets `.redeemed`;
    /// the others arrived with valid proof for a code that is now used, which is a replay.
    mutating func codeRedeemed(_ outcome: CodeRedemption) -> Action {
        guard case .redeemingCode(let redemption) = state else {
            preconditionFailure("codeRedeemed(_:) called in \(state)")
        }
        switch outcome {
        case .redeemed:
            state = .finished
            return .respond(.redeemed(redemption))
        case .alreadyRedeemed(let grant):
            return revoke(grant, because: .codeReplayed, refusing: .codeReplayed)
        case .notFound:
            return refuse(.codeExpired)
        }
    }
}
