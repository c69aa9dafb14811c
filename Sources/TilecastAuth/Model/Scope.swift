// SPDX-License-Identifier: Apache-2.0

/// An OAuth scope: space-delimited scope tokens (RFC 6749 §3.3).
///
/// The value is kept exactly as issued, so the scope returned on every refresh is identical to the one
/// the user approved (RFC 6749 §6: "the refresh token scope MUST be identical").
public struct Scope: Hashable, Sendable {
    /// The scope string as issued.
    public let rawValue: String

    /// Accepts a scope string of the RFC 6749 §3.3 grammar, `scope-token *( SP scope-token )` with
    /// `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`, or the empty string; `nil` otherwise.
    public init?(_ rawValue: String) {
        var previousWasSpace = true
        for byte in rawValue.utf8 {
            switch byte {
            case 0x20:
                guard !previousWasSpace else { return nil }
                previousWasSpace = true
            case 0x21, 0x23...0x5B, 0x5D...0x7E:
                previousWasSpace = false
            default:
                return nil
            }
        }
        guard rawValue.isEmpty || !previousWasSpace else { return nil }
        self.rawValue = rawValue
    }

    /// The scope tokens, in the order issued.
    public var tokens: [Substring] {
        rawValue.split(separator: " ")
    }

    /// The empty scope.
    public static let empty = Scope("")!
}

extension Scope: CustomStringConvertible {
    public var description: String { rawValue }
}
