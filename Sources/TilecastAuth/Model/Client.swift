// SPDX-License-Identifier: Apache-2.0

/// A registered OAuth client: its identifier, its exact redirect URIs and the scope it may ask for.
///
/// Clients are data the store holds, not constants: a Tilecast server knows `tilecast-ios`,
/// `tilecast-web`, `tilecast-cli` and whatever else it registers. The ios-session endpoint serves one of
/// them — the configuration's ``EngineConfiguration/servedClient`` — and refuses codes and tokens of
/// every other (RFC 6749 §10.4: keep the binding between a token and its client).
public struct Client: Hashable, Sendable {
    /// The client identifier.
    public var id: ClientID
    /// The registered redirect URIs, matched byte for byte (RFC 6749 §3.1.2.3, RFC 9700 §2.1).
    public var redirectURIs: [String]
    /// The scope tokens the client may be granted; a request for any other token is refused.
    public var allowedScopeTokens: Set<String>

    public init(id: ClientID, redirectURIs: [String], allowedScopeTokens: Set<String>) {
        self.id = id
        self.redirectURIs = redirectURIs
        self.allowedScopeTokens = allowedScopeTokens
    }
}
