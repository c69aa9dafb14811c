// SPDX-License-Identifier: Apache-2.0

/// The kinds of secret TilecastAuth mints, each with a short prefix so that a leaked value is
/// recognisable (by a person, or by a secret scanner) and cannot be mistaken for another kind.
public enum SecretKind: String, Hashable, Sendable, CaseIterable {
    /// A single-use authorization code (RFC 6749 §4.1.2).
    case authorizationCode
    /// A native access token, presented as `Authorization: Bearer` (RFC 6750 §2.1).
    case accessToken
    /// A rotating refresh token (RFC 6749 §6, RFC 9700 §4.14.2).
    case refreshToken
    /// The value of a Studio session cookie.
    case studioSession

    /// The prefix of every value of this kind, for example `tcr_` for refresh tokens.
    public var prefix: String {
        switch self {
        case .authorizationCode: "tcc_"
        case .accessToken: "tca_"
        case .refreshToken: "tcr_"
        case .studioSession: "tcs_"
        }
    }

    /// The number of random bytes behind every secret: 256 bits, above the 2^-160 guessing bound of
    /// RFC 6749 §10.10 and OAuth 2.1 §7.7.
    public static let randomByteCount = 32

    /// The length in characters of every value: the prefix and 43 base64url characters.
    public static let encodedLength = 4 + 43
}
