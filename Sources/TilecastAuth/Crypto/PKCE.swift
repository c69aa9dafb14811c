// SPDX-License-Identifier: Apache-2.0

/// Proof Key for Code Exchange (RFC 7636), S256 only.
enum PKCE {
    /// Whether `verifier` is `43*128unreserved` with `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"`
    /// (RFC 7636 §4.1).
    static func isWellFormedVerifier(_ verifier: JSONText) -> Bool {
        let bytes = verifier.bytes
        guard (43...128).contains(bytes.count) else { return false }
        return verifier.withBytes { ASCIISet.unreserved.containsAll($0) }
    }

    /// `BASE64URL-ENCODE(SHA256(ASCII(code_verifier)))` (RFC 7636 §4.2).
    static func s256Challenge(for verifier: String) -> String {
        SHA256.hash(utf8: verifier).withBytes { Base64URL.encode($0) }
    }

    /// Whether `verifier` answers `challenge` (RFC 7636 §4.6). Only an S256 challenge can be answered; the
    /// digests are compared in constant time.
    static func verify(_ verifier: JSONText, against challenge: CodeChallenge?) -> Bool {
        verify(verifierDigest: verifier.withBytes { SHA256.hash($0) }, against: challenge)
    }

    /// ``verify(_:against:)`` for a verifier already hashed: `verifierDigest` is `SHA256(code_verifier)`.
    static func verify(verifierDigest: SHA256Words, against challenge: CodeChallenge?) -> Bool {
        guard let expected = challenge?.s256Digest else { return false }
        return ConstantTime.equals(verifierDigest, expected)
    }
}
