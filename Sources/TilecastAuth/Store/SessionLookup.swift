// SPDX-License-Identifier: Apache-2.0

/// A Studio session together with its grant, as one read returns them.
public struct SessionLookup: Hashable, Sendable {
    /// The session.
    public var session: StudioSession
    /// The grant it belongs to.
    public var grant: Grant

    public init(session: StudioSession, grant: Grant) {
        self.session = session
        self.grant = grant
    }
}
