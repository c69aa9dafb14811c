// SPDX-License-Identifier: Apache-2.0

/// The default observer: ignores every event.
public struct NoOpSecurityEventObserver: SecurityEventObserver {
    public init() {}

    public func observe(_ event: SecurityEvent) {}
}
