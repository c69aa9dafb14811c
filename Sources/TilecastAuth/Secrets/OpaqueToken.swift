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
    /// The secret's text, held in the value itself: the engine writes it into a response body or a
    /// `Set-Cookie` value from here, so minting a secret allocates nothing.
    private let text: Text
    /// The SHA-256 digest of ``unredactedValue``, the form stores keep.
    public let digest: SecretDigest

    private init(kind: SecretKind, text: Text, digest: SecretDigest) {
        self.kind = kind
        self.text = text
        self.digest = digest
    }

    /// The full text of the secret, as a new `String` on each read. Never log it.
    public var unredactedValue: String {
        withUnredactedBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the secret's text as bytes, for writers that copy it straight into their
    /// output (the response body, the `Set-Cookie` value) without making a `String` of it.
    func withUnredactedBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(of: text.storage) { storage in
            try body(UnsafeRawBufferPointer(rebasing: storage[0..<SecretKind.encodedLength]))
        }
    }

    /// Mints a fresh secret of `kind`, reading its 32 random bytes from `randomSource` in one request.
    public static func mint(_ kind: SecretKind, using randomSource: some RandomSource) -> OpaqueToken {
        let length = SecretKind.encodedLength
        // The buffers' own bounds are checked in debug builds only: the text must fit its storage. Both
        // sides are constants, so the check costs nothing at run time.
        precondition(length <= MemoryLayout<Text>.size, "a secret's text outgrew OpaqueToken's inline storage")
        var text = Text()
        let digest = withUnsafeMutableBytes(of: &text.storage) { output in
            withUnsafeTemporaryAllocation(byteCount: SecretKind.randomByteCount, alignment: 8) { random in
                randomSource.fill(random)
                var index = 0
                for byte in kind.prefix.utf8 {
                    output[index] = byte
                    index += 1
                }
                // The storage is typed as words; bound to bytes only while the encoder writes them.
                UnsafeMutableRawBufferPointer(rebasing: output[index..<length]).withMemoryRebound(to: UInt8.self) {
                    Base64URL.encode(UnsafeRawBufferPointer(random), into: $0)
                }
                random.initializeMemory(as: UInt8.self, repeating: 0)
                return SHA256.hash(UnsafeRawBufferPointer(rebasing: output[0..<length]))
            }
        }
        return OpaqueToken(kind: kind, text: text, digest: SecretDigest(words: digest))
    }

    /// Accepts a value a client presented as a secret of `kind`, or returns `nil` when it cannot be one.
    ///
    /// The check is on shape only — the prefix, the length and the base64url alphabet — so a value that
    /// could never have been minted is refused without a store lookup. Whether the secret exists is the
    /// store's answer to ``digest``.
    public init?(presented value: String, as kind: SecretKind) {
        let token: OpaqueToken? = value.withLentUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            guard Self.isWellFormed(bytes, as: kind) else { return nil }
            var text = Text()
            withUnsafeMutableBytes(of: &text.storage) { $0.copyMemory(from: bytes) }
            return OpaqueToken(kind: kind, text: text, digest: SecretDigest(words: SHA256.hash(bytes)))
        }
        guard let token else { return nil }
        self = token
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

extension OpaqueToken {
    /// A secret's text: the kind's prefix and 43 base64url characters, ``SecretKind/encodedLength``
    /// bytes in 48 bytes of inline storage.
    fileprivate struct Text {
        var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    }
}
