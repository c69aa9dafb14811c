// SPDX-License-Identifier: Apache-2.0

/// How the dev server listens and what it stores in.
public struct DevServerConfiguration: Sendable {
    /// Where the grants live.
    public enum Store: Sendable, Equatable {
        case memory
        case postgres(databaseURL: String)
    }

    /// The IPv4 address to listen on; loopback unless the developer says otherwise.
    public var host = "127.0.0.1"
    /// The port; 0 for an ephemeral one (tests).
    public var port: UInt16 = 8080
    public var store = Store.memory
    /// Plain HTTP cannot carry the production cookie (`__Host-` requires `Secure`, and a browser drops a
    /// `Secure` cookie sent over HTTP). This flag names the cookie `tilecast_session`, without `Secure`.
    /// Development only; the server warns when it is on.
    public var insecureDevelopmentCookie = false
    /// PEM files for HTTPS. With them the server speaks HTTPS only and keeps the production cookie.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// Serves the conformance control API (`Docs/Conformance/ControlAPI.md`) under `/conformance/v1/`,
    /// guarded by a random token, and sends endpoint requests to the control API's world instead of the
    /// server's own engine. Off by default; without it those routes do not exist. Loopback only.
    public var conformanceControl = false

    public init() {}

    var usesTLS: Bool { tlsCertificatePath != nil && tlsKeyPath != nil }
}
