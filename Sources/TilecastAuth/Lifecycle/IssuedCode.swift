// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A freshly issued authorization code, for the authorize step's redirect.
public struct IssuedCode: Sendable {
    /// The code. Put ``OpaqueToken/unredactedValue`` in the redirect's `code` parameter, nowhere else.
    public let code: OpaqueToken
    /// When the code stops being redeemable.
    public let expiresAt: Date
}
