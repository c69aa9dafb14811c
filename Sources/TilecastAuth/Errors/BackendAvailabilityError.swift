// SPDX-License-Identifier: Apache-2.0

/// An error a backend throws that can say the backend was unavailable: the operation failed before any
/// of it was sent, because the backend could begin no operation at that moment.
///
/// A store's errors conform to let the engine answer sooner. When a write it goes forward to on a
/// remembered record (``GrantStore``'s "Remembered records") throws an error whose
/// ``backendWasUnavailable`` is `true`, the engine answers the failure at once — a 503, as for any store
/// failure — instead of first reading the record to decide, which would wait for the same backend a
/// second time. The answer is still one a reader gives: a reader that began its read at the moment the
/// write began would have found the backend unavailable too, and answered 503 having read nothing.
/// Conforming is optional: an error that does not conform is taken as one that may have reached the
/// backend.
///
/// `PostgresError` conforms: a wait for a connection that ran out (`poolTimeout`), a server that
/// accepted no connection within the wait, a store that was closed.
public protocol BackendAvailabilityError: Error {
    /// `true` only when nothing of the operation reached the backend *and* the backend could have begun
    /// no other operation then either — every connection busy, or none could be opened, or the store
    /// closed — so that a read begun at the same moment would have failed the same way.
    ///
    /// `false` whenever any of the operation may have been sent, even when it surely wrote nothing (a
    /// statement the server refused, a transaction rolled back), and for every failure the backend
    /// reported itself.
    var backendWasUnavailable: Bool { get }
}
