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

    /// The rate limit per peer address, for the endpoint and the sign-in form's post alike: `capacity`
    /// attempts, refilled one per `refillSeconds`. On the PostgreSQL store the limiter is PostgreSQL's,
    /// shared by every instance.
    public var rateLimit = (capacity: 100, refillSeconds: 1.0)
    /// The PostgreSQL pool: connections per instance (store and limiter each), how long a request waits
    /// for one, and the server's and the client's limits on an operation (`nil`: the statement timeout
    /// plus one second).
    public var poolSize = 10
    public var poolWaitSeconds = 5.0
    /// How long opening a connection may take, in whole seconds (libpq's `connect_timeout`, at least 2).
    public var connectTimeoutSeconds = 10
    public var statementTimeoutSeconds = 5.0
    public var operationTimeoutSeconds: Double?
    /// How often expired records are removed from the store; 0 never.
    public var pruneIntervalSeconds = 60.0

    public init() {}

    var usesTLS: Bool { tlsCertificatePath != nil && tlsKeyPath != nil }
}
