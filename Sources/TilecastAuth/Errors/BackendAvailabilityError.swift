// SPDX-License-Identifier: Apache-2.0

/// An error a backend throws that can say the backend could not serve the operation at that moment: it
/// was unavailable, so nothing of the operation was sent (``backendWasUnavailable``), or it was sent and
/// nothing answered it before its deadline (``backendDidNotAnswer``).
///
/// A store's errors conform to let the engine answer sooner. When a write it goes forward to on a
/// remembered record (``GrantStore``'s "Remembered records") throws an error that says either, the engine
/// answers the failure at once — a 503, as for any store failure — instead of first reading the record
/// to decide, which would wait for the same backend a second time. The answer is still one a reader
/// gives: a reader whose read began at the moment the write began would have found the backend
/// unavailable too, or sent its read where the write went and had no answer either, and answered 503
/// having read nothing. Conforming is optional: an error that does not conform is taken as one that may
/// have reached the backend and been answered.
///
/// `PostgresError` conforms: a wait for a connection that ran out (`poolTimeout`), a server that
/// accepted no connection within the wait, a store that was closed; a statement PostgreSQL did not
/// answer within the operation's deadline (`timeout`).
public protocol BackendAvailabilityError: Error {
    /// `true` only when nothing of the operation reached the backend *and* the backend could have begun
    /// no other operation then either — every connection busy, or none could be opened, or the store
    /// closed — so that a read begun at the same moment would have failed the same way.
    ///
    /// `false` whenever any of the operation may have been sent, even when it surely wrote nothing (a
    /// statement the server refused, a transaction rolled back), and for every failure the backend
    /// reported itself.
    var backendWasUnavailable: Bool { get }

    /// `true` only when the operation was sent and no answer came back — neither a result, nor an error,
    /// nor the connection's end — before the operation's deadline, which the store then gave up at: the
    /// backend or the path to it stayed silent (a frozen server, a network partition, a commit waiting on
    /// a stalled disk). Whether a write committed is unknown. A read sent at the same moment, where the
    /// write was sent, would have waited out the same deadline unanswered.
    ///
    /// `false` for every failure that was answered — an error the backend reported, a connection the
    /// backend or the network closed — even when it came after the write was sent: an answer means the
    /// backend could be reached, and a read may settle what the write did. `false` by default.
    var backendDidNotAnswer: Bool { get }
}

extension BackendAvailabilityError {
    /// `false`: an error type that does not say so is taken as one the backend answered.
    public var backendDidNotAnswer: Bool { false }
}
