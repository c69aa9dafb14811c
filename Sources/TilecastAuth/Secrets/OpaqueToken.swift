// SPDX-License-Identifier: Apache-2.0

/// A secret TilecastAuth minted or a client presented: an authorization code, an access or refresh
/// token, or a Studio session id.
///
/// The value is the kind's prefix followed by 32 bytes from the random source in base64url (43
/// characters), 256 bits in all (RFC 6749 §10.10). The type never prints its value: `description`,
/// `debugDescription` and its mirror show only the prefix. Read ``unredactedValue`` exactly where the
/// value must leave the process — the response body, the `Set-Cookie` header, the redirect — and
/// nowhere else. Stores receive ``digest`` only.
///
/// The type is deliberately not `Equatable`: comparing secrets goes through their digests.
public struct OpaqueToken: Sendable {
    /// What kind of secret this is.
    public let kind: SecretKind
    /// The full text of the secret. Never log it.
    public let unredactedValue: String
    /// The SHA-256 digest of ``unredactedValue``, the form stores keep.
    public let digest: SecretDigest

    private init(kind: SecretKind, unredactedValue: String, digest: SecretDigest) {
        self.kind = kind
        self.unredactedValue = unredactedValue
        self.digest = digest
    }

    /// Mints a fresh secret of `kind`, reading its 32 random bytes from `randomSource` in one request.
    public static func mint(_ kind: SecretKind, using randomSource: some RandomSource) -> OpaqueToken {
        let prefix = kind.prefix.utf8
        let length = SecretKind.encodedLength
        var digest = SHA256Words.initial
        let value = withUnsafeTemporaryAllocation(byteCount: SecretKind.randomByteCount, alignment: 8) { random in
            randomSource.fill(random)
            let value = String(unsafeUninitializedCapacity: length) { output in
                var index = 0
                for byte in prefix {
                    output[index] = byte
                    index += 1
                }
                Base64URL.encode(
                    UnsafeRawBufferPointer(random),
                    into: UnsafeMutableBufferPointer(rebasing: output[index..<length])
                )
                digest = SHA256.hash(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: output[0..<length])))
                return length
            }
            random.initializeMemory(as: UInt8.self, repeating: 0)
            return value
        }
        return OpaqueToken(kind: kind, unredactedValue: value, digest: SecretDigest(words: digest))
    }

    /// Accepts a value a client presented as a secret of `kind`, or returns `nil` when it cannot be one.
    ///
    /// The check is on shape only — the prefix, the length and the base64url alphabet — so a value that
    /// could never have been minted is refused without a store lookup. Whether the secret exists is the
    /// store's answer to ``digest``.
    public init?(presented value: String, as kind: SecretKind) {
        var value = value
        guard value.withUTF8({ Self.isWellFormed(UnsafeRawBufferPointer($0), as: kind) }) else { return nil }
        self.init(kind: kind, unredactedValue: value, digest: SecretDigest(of: value))
    }

    /// The digest of a secret a client presented in a request body, or `nil` when the text cannot be a
    /// secret of `kind` — the check of ``init(presented:as:)`` without making a `String` of the secret.
    static func presentedDigest(_ text: JSONText, as kind: SecretKind) -> SecretDigest? {
        text.withBytes { bytes in
            isWellFormed(bytes, as: kind) ? SecretDigest(words: SHA256.hash(bytes)) : nil
        }
    }

    /// Whether `bytes` have the shape of a secret of `kind`: its prefix, then base64url, at the minted
    /// length.
    private static func isWellFormed(_ bytes: UnsafeRawBufferPointer, as kind: SecretKind) -> Bool {
        guard bytes.count == SecretKind.encodedLength else { return false }
        var index = 0
        for byte in kind.prefix.utf8 {
            guard bytes[index] == byte else { return false }
            index += 1
        }
        return ASCIISet.base64URL.containsAll(UnsafeRawBufferPointer(rebasing: bytes[index...]))
    }
}

extension OpaqueToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The kind's prefix and asterisks; never the value.
    public var description: String {
        "\(kind.prefix)********"
    }

    /// The same as ``description``: a secret has no debug form that shows it.
    public var debugDescription: String {
        "OpaqueToken(\(kind.prefix)********)"
    }

    /// A mirror with the kind only, so `dump` and reflection cannot reach the value.
    public var customMirror: Mirror {
        Mirror(self, children: ["kind": kind], displayStyle: .struct)
    }
}
