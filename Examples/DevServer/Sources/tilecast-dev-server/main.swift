// SPDX-License-Identifier: Apache-2.0

import DevServerKit
import Dispatch
import Foundation
import TilecastAuth

/// `tilecast-dev-server`: the local Tilecast auth server. See Examples/DevServer/README.md.
let usage = """
    usage: swift run --package-path Examples/DevServer tilecast-dev-server [options]

      --port N                     the port (default 8080)
      --host ADDRESS               the IPv4 address to listen on (default 127.0.0.1, loopback only)
      --store memory|postgres      where grants live (default memory)
      --database-url URL           the PostgreSQL server, with --store postgres (schema tilecast_dev)
      --insecure-development-cookie
                                   plain HTTP: name the session cookie tilecast_session, without Secure
                                   (the production __Host- cookie cannot travel over HTTP)
      --tls-cert PATH --tls-key PATH
                                   serve HTTPS with this PEM certificate and key, keeping the production
                                   cookie
      --rate-limit N               attempts per peer address, for the endpoint and the sign-in form (default 100)
      --rate-limit-refill SECONDS  one attempt back per this many seconds (default 1)
      --pool-size N                PostgreSQL connections per instance, store and limiter each (default 10)
      --pool-wait SECONDS          how long a request waits for a connection, then 503 (default 5)
      --connect-timeout SECONDS    how long opening a PostgreSQL connection may take (default 10)
      --statement-timeout SECONDS  PostgreSQL's statement_timeout (default 5)
      --operation-timeout SECONDS  the client's own deadline on PostgreSQL (default: statement timeout + 1)
      --prune-every SECONDS        remove expired records this often; 0 never (default 60)
      --conformance-control        also serve the conformance control API under /conformance/v1/ (loopback
                                   only, guarded by a token printed at start) and answer the endpoint from
                                   its world: for `tilecast-auth conformance --target`. Testing only.
    """

/// Writes a line to standard output at once — unbuffered, so the log is current even in a file or pipe.
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tilecast-dev-server: \(message)\n\n\(usage)\n".utf8))
    exit(64)
}
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    say(usage)
    exit(0)
}
let configuration: DevServerConfiguration
do {
    configuration = try DevServerConfiguration(arguments: arguments)
} catch {
    fail(error.description)
}
let storeName = configuration.store == .memory ? "memory" : "postgres"

let server: DevServer
do {
    server = try await DevServer(configuration: configuration, log: say)
    try server.start()
} catch {
    fail("could not start: \(error)")
}

let base = server.baseURL
say(
    """
    Tilecast dev server on \(base)   (\(storeName) store)

      try it      \(base)/try   (plays the app in your browser: PKCE, sign-in, exchange, cookie)
      authorize   \(base)/oauth/authorize?response_type=code&client_id=tilecast-ios&redirect_uri=tilecast-ios%3A%2F%2Foauth%2Fcallback&code_challenge=<S256>&code_challenge_method=S256&state=<state>&scope=tiles%3Aread%20profile
      endpoint    \(base)/api/v1/oauth/ios-session
      studio      \(base)/studio
      native API  \(base)/api/v1/me
      accounts    \(base)/account

      demo accounts: \(DevServer.demoAccounts.map { "\($0.id.rawValue) (\($0.name))" }.joined(separator: ", "))
    """
)
if configuration.insecureDevelopmentCookie && configuration.tlsCertificatePath == nil {
    say(
        """

        WARNING: --insecure-development-cookie: the session cookie is tilecast_session without Secure, so it
        travels over plain HTTP. Development only — never expose this server beyond your machine.
        """
    )
} else if configuration.tlsCertificatePath == nil {
    say(
        """

        note: over plain HTTP the server sends the production cookie (__Host-tilecast_session, Secure).
        Chromium keeps it from http://127.0.0.1 and http://localhost, which count as secure contexts;
        WebKit does not, and from any other address (a phone on your network) no browser does. For those,
        use --insecure-development-cookie, or --tls-cert and --tls-key.
        """
    )
}
if let token = server.conformanceToken {
    say(
        """

        CONFORMANCE CONTROL API on \(base)/conformance/v1/ — the endpoint now answers from its world, not
        from this server's own store. Testing only. Run the scenarios with:
          TILECAST_CONFORMANCE_TOKEN=\(token) swift run tilecast-auth conformance --target \(base)
        control token: \(token)
        """
    )
}
if configuration.host != "127.0.0.1" {
    say("\nWARNING: listening on \(configuration.host), not loopback only.")
}

// Graceful shutdown: stop accepting, finish the requests under way, then exit.
await TerminationSignal.wait()
say("\nshutting down")
server.stop()
say("stopped")
