// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Where TilecastAuth reads the current time: every expiry, rate-limit window and cookie lifetime is
/// measured against it.
///
/// Production uses ``SystemTimeSource``; tests inject a clock they move by hand, so nothing sleeps and
/// every run is the same.
public protocol TimeSource: Sendable {
    /// The current time.
    func now() -> Date
}
