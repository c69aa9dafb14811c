// SPDX-License-Identifier: Apache-2.0

/// Receives the engine's ``SecurityEvent``s, so a server can bridge them to its logging, metrics and
/// alerting without TilecastAuth depending on any of them.
///
/// Called synchronously on the request's task: keep it fast and never block.
public protocol SecurityEventObserver: Sendable {
    /// Called once per event, in the order the events happen within a request.
    func observe(_ event: SecurityEvent)
}
