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
        try text.withBytes(body)
    }

    /// Mints a fresh secret of `kind`, reading its 32 random bytes from `randomSource` in one request.
    public static func mint(_ kind: SecretKind, using randomSource: some RandomSource) -> OpaqueToken {
        let text = Text(minting: kind, using: randomSource)
        return OpaqueToken(kind: kind, text: text, digest: text.withBytes { SecretDigest(words: SHA256.hash($0)) })
    }

    /// Mints two fresh secrets, `first`'s random bytes read from `randomSource` before `second`'s, and
    /// hashes them together (``SHA256/hashTogether(_:_:on:)``): the two digests in about the time of one.
    static func mint(
        _ first: SecretKind,
        _ second: SecretKind,
        using randomSource: some RandomSource
    ) -> (OpaqueToken, OpaqueToken) {
        let firstText = Text(minting: first, using: randomSource)
        let secondText = Text(minting: second, using: randomSource)
        let digests = firstText.withBytes { firstBytes in
            secondText.withBytes { SHA256.hashTogether(firstBytes, $0) }
        }
        return (
            OpaqueToken(kind: first, text: firstText, digest: SecretDigest(words: digests.0)),
            OpaqueToken(kind: second, text: secondText, digest: SecretDigest(words: digests.1))
        )
    }

    /// Mints three fresh secrets, their random bytes read from `randomSource` in the order given, and
    /// hashes them together (``SHA256/hashTogether(_:_:_:)``).
    static func mint(
        _ first: SecretKind,
        _ second: SecretKind,
        _ third: SecretKind,
        using randomSource: some RandomSource
    ) -> (OpaqueToken, OpaqueToken, OpaqueToken) {
        let firstText = Text(minting: first, using: randomSource)
        let secondText = Text(minting: second, using: randomSource)
        let thirdText = Text(minting: third, using: randomSource)
        let digests = firstText.withBytes { firstBytes in
            secondText.withBytes { secondBytes in
                thirdText.withBytes { SHA256.hashTogether(firstBytes, secondBytes, $0) }
            }
        }
        return (
            OpaqueToken(kind: first, text: firstText, digest: SecretDigest(words: digests.0)),
            OpaqueToken(kind: second, text: secondText, digest: SecretDigest(words: digests.1)),
            OpaqueToken(kind: third, text: thirdText, digest: SecretDigest(words: digests.2))
        )
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

    /// ``presentedDigest(_:as:)``, and beside it the SHA-256 of `companion` — the PKCE verifier a code
    /// comes with — hashed together with the secret when the companion fits one block
    /// (``SHA256/hashTogether(_:_:on:)``), as a verifier of up to 55 characters does; `nil`, hashing
    /// nothing, when the text cannot be a secret of `kind`.
    static func presentedDigest(
        _ text: JSONText,
        as kind: SecretKind,
        hashedWith companion: JSONText
    ) -> (secret: SecretDigest, companion: SHA256Words)? {
        text.withBytes { bytes in
            guard isWellFormed(bytes, as: kind) else { return nil }
            return companion.withBytes { companion in
                guard companion.count <= SHA256.singleBlockMessageLimit else {
                    return (SecretDigest(words: SHA256.hash(bytes)), SHA256.hash(companion))
                }
                let digests = SHA256.hashTogether(bytes, companion)
                return (SecretDigest(words: digests.0), digests.1)
            }
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

        init() {}

        /// The text of a fresh secret of `kind`: its prefix and 32 bytes read from `randomSource` in one
        /// request, in base64url. The random bytes are zeroed once encoded.
        init(minting kind: SecretKind, using randomSource: some RandomSource) {
            let length = SecretKind.encodedLength
            // The buffers' own bounds are checked in debug builds only: the text must fit its storage, and
            // be short enough to be hashed together with others. Both sides are constants, so the checks
            // cost nothing at run time.
            precondition(length <= MemoryLayout<Text>.size, "a secret's text outgrew OpaqueToken's inline storage")
            precondition(length <= SHA256.singleBlockMessageLimit, "a secret's text outgrew one SHA-256 block")
            withUnsafeMutableBytes(of: &storage) { output in
                withUnsafeTemporaryAllocation(byteCount: SecretKind.randomByteCount, alignment: 8) { random in
                    randomSource.fill(random)
                    var index = 0
                    for byte in kind.prefix.utf8 {
                        output[index] = byte
                        index += 1
                    }
                    // The storage is typed as words; bound to bytes only while the encoder writes them.
                    UnsafeMutableRawBufferPointer(rebasing: output[index..<length]).withMemoryRebound(
                        to: UInt8.self
                    ) {
                        Base64URL.encode(UnsafeRawBufferPointer(random), into: $0)
                    }
                    random.initializeMemory(as: UInt8.self, repeating: 0)
                }
            }
        }

        /// Calls `body` with the text's ``SecretKind/encodedLength`` bytes.
        func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
            try withUnsafeBytes(of: storage) { storage in
                try body(UnsafeRawBufferPointer(rebasing: storage[0..<SecretKind.encodedLength]))
            }
        }
    }
}
