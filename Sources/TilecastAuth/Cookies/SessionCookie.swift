// SPDX-License-Identifier: Apache-2.0

/// A Studio session cookie to set — or to delete — with its attributes, rendered as one `Set-Cookie`
/// field value.
///
/// The rendering follows rfc6265bis §4.1.1: `name=value`, then `Max-Age`, `Path`, `Domain` when there is
/// one, `Secure`, `HttpOnly` and `SameSite`, each once. There is deliberately no `Expires`: `Max-Age`
/// takes precedence wherever both appear (§4.1.2.2), and the comma inside an HTTP date breaks clients
/// that fold repeated `Set-Cookie` fields into one comma-joined string, as `URLSession` does.
public struct SessionCookie: Sendable {
    /// The cookie name.
    public let name: String
    /// The session id, or `nil` for a deletion.
    private let session: OpaqueToken?
    /// `Max-Age` in seconds: the session's remaining lifetime, or 0 to delete the cookie
    /// (rfc6265bis §5.6.2).
    public let maxAge: Int
    /// The attributes, from the configuration.
    public let configuration: SessionCookieConfiguration

    /// The cookie that carries a new session id for `maxAge` seconds.
    init(session: OpaqueToken, maxAge: Int, configuration: SessionCookieConfiguration) {
        self.name = configuration.name
        self.session = session
        self.maxAge = maxAge
        self.configuration = configuration
    }

    /// The cookie that deletes the session cookie in the browser, for a sign-out response.
    public static func deletion(configuration: SessionCookieConfiguration) -> SessionCookie {
        SessionCookie(name: configuration.name, session: nil, maxAge: 0, configuration: configuration)
    }

    private init(name: String, session: OpaqueToken?, maxAge: Int, configuration: SessionCookieConfiguration) {
        self.name = name
        self.session = session
        self.maxAge = maxAge
        self.configuration = configuration
    }

    /// The `Set-Cookie` field value. It contains the session id: send it, never log it.
    public var headerValue: String {
        // Written straight into the string's own storage, sized up front: the attributes' fixed text is
        // under 64 bytes and a Max-Age at most 20 digits.
        let capacity =
            name.utf8.count + (session == nil ? 0 : SecretKind.encodedLength) + configuration.path.utf8.count
            + (configuration.domain?.utf8.count ?? 0) + configuration.sameSite.rawValue.utf8.count + 96
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var output = ByteWriter(buffer, owner: "SessionCookie")
            output.write(contentsOf: name)
            output.write("=")
            session?.withUnredactedBytes { output.write($0) }
            output.write("; Max-Age=")
            output.writeDecimal(maxAge)
            output.write("; Path=")
            output.write(contentsOf: configuration.path)
            if let domain = configuration.domain {
                output.write("; Domain=")
                output.write(contentsOf: domain)
            }
            if configuration.secure {
                output.write("; Secure")
            }
            output.write("; HttpOnly; SameSite=")
            output.write(contentsOf: configuration.sameSite.rawValue)
            return output.count
        }
    }
}

extension SessionCookie: CustomStringConvertible, CustomReflectable {
    /// The header with the session id masked.
    public var description: String {
        let masked = session == nil ? "" : "********"
        return "SessionCookie(\(name)=\(masked); Max-Age=\(maxAge))"
    }

    /// A mirror without the value.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "maxAge": maxAge], displayStyle: .struct)
    }
}
