// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

/// Shortens every secret in a text to its prefix and first six characters, so that output a person reads
/// — a transcript, a failure diff — shows which secret it is without showing the secret.
public struct SecretShortener: Sendable {
    /// Secrets without a recognisable prefix, such as PKCE verifiers.
    public var extraSecrets: [String] = []

    public init(extraSecrets: [String] = []) {
        self.extraSecrets = extraSecrets
    }

    /// `text` with every `tcc_`/`tca_`/`tcr_`/`tcs_` value and every extra secret shortened.
    public func shorten(_ text: String) -> String {
        var result = text
        for secret in extraSecrets where secret.count >= 8 {
            result = result.replacing(secret, with: String(secret.prefix(6)) + "…")
        }
        var output = ""
        var index = result.startIndex
        while index < result.endIndex {
            let rest = result[index...]
            if let kind = SecretKind.allCases.first(where: { rest.hasPrefix($0.prefix) }) {
                let body = rest.dropFirst(kind.prefix.count).prefix(43)
                let isSecret =
                    body.count == 43
                    && body.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
                if isSecret {
                    output += kind.prefix + body.prefix(6) + "…"
                    index = body.endIndex
                    continue
                }
            }
            output.append(result[index])
            index = result.index(after: index)
        }
        return output
    }
}
