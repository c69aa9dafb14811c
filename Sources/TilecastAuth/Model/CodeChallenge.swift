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

    /// How the challenge is held. An S256 challenge in its canonical form — the only kind that can ever
    /// be redeemed, and so the only kind a store holds many of — is kept as its 32-byte digest: the text
    /// is its base64url and is rebuilt on demand. Anything else is kept as sent, to be refused.
    private enum Storage: Hashable, Sendable {
        case s256(SHA256Words)
        case other(method: Method, value: String)
    }

    private var storage: Storage

    /// The method the challenge was made with.
    public var method: Method {
        get {
            switch storage {
            case .s256: .s256
            case .other(let method, _): method
            }
        }
        set { self = CodeChallenge(method: newValue, value: value) }
    }

    /// The `code_challenge` value as the client sent it.
    public var value: String {
        get {
            switch storage {
            case .s256(let digest): digest.withBytes { Base64URL.encode($0) }
            case .other(_, let value): value
            }
        }
        set { self = CodeChallenge(method: method, value: newValue) }
    }

    /// The SHA-256 digest an S256 challenge encodes, or `nil` for another method or a value that is not
    /// the canonical base64url of 32 bytes (43 characters). Decoded once, when the challenge is made, so
    /// that verifying a code does no base64 work.
    var s256Digest: SHA256Words? {
        guard case .s256(let digest) = storage else { return nil }
        return digest
    }

    public init(method: Method, value: String) {
        if ASCII.equal(method.rawValue, Method.s256.rawValue), let digest = Base64URL.decodeDigest(value) {
            storage = .s256(digest)
        } else {
            storage = .other(method: method, value: value)
        }
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
