// SPDX-License-Identifier: Apache-2.0

import Synchronization

/// Hands requests to the server once it exists: the HTTP server is made before the ``DevServer`` that
/// owns it is complete.
final class Router: Sendable {
    let server = Mutex<DevServer?>(nil)

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        guard let server = server.withLock({ $0 }) else { return HTTPResponse(status: 503) }
        return await server.handle(request)
    }
}
