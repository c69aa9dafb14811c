// SPDX-License-Identifier: Apache-2.0

/// The PKCE challenge stored with an authorization code (RFC 7636 §4.4).
///
/// Only ``Method-swift.struct/s256`` is ever redeemable. A stored challenge with any other method — or
/// a code stored with no challenge at all — is refused at the token endpoint: RFC 7636 §4.3 would read
/// a missing method as `plain`, and RFC 9700 §2.1.1 asks that a verifier never be accepted for a code
/// that had no challenge.
public struct CodeChallenge: Hashable, Sendable {
    /// A `code_challenge_method` value (RFC 7636 §4.3).
    public struct Method: RawRepresentable, Hashable, Sendable {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// `S256`: `BASE64URL(SHA256(ASCII(code_verifier)))` (RFC 7636 §4.2). The only method accepted.
        public static let s256 = Method(rawValue: "S256")
        /// `plain`: the verifier itself. Represented so that a legacy record can be read, never redeemed.
        public static let plain = Method(rawValue: "plain")
    }

    /// The method the challenge was made with.
    public var method: Method
    /// The `code_challenge` value as the client sent it.
    public var value: String

    public init(method: Method, value: String) {
        self.method = method
        self.value = value
    }

    /// The SHA-256 digest an S256 challenge encodes, or `nil` for another method or a value that is not
    /// the canonical base64url of 32 bytes (43 characters).
    var s256Digest: SHA256Words? {
        guard method == .s256, value.utf8.count == 43, let bytes = Base64URL.decode(value), bytes.count == 32 else {
            return nil
        }
        return SecretDigest(bytes: bytes)?.words
    }
}

extension CodeChallenge {
    /// The S256 challenge for `verifier`: `BASE64URL(SHA256(ASCII(code_verifier)))` (RFC 7636 §4.2).
    ///
    /// What a client sends in the authorization request. The server never needs it — it only ever
    /// verifies — but tests, demos and client tooling do.
    public static func s256(for verifier: String) -> CodeChallenge {
        CodeChallenge(method: .s256, value: PKCE.s256Challenge(for: verifier))
    }

    /// A fresh code verifier: 32 bytes from `randomSource` in base64url, 43 characters, as RFC 7636 §4.1
    /// recommends (256 bits of entropy, §7.1).
    public static func makeVerifier(using randomSource: some RandomSource) -> String {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { bytes in
            randomSource.fill(bytes)
            return Base64URL.encode(UnsafeRawBufferPointer(bytes))
        }
    }
}
