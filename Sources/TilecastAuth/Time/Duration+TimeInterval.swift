// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Duration {
    /// The duration in seconds, as a `TimeInterval` for date arithmetic.
    var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The lifetimes a request's expiries are made of, in seconds, converted from ``TokenLifetimes`` once
/// per engine: converting a `Duration` divides its 128-bit count of attoseconds, about 90 instructions,
/// and an exchange made four of them and a refresh two or three.
struct LifetimeIntervals: Sendable, Equatable {
    let accessToken: TimeInterval
    let refreshTokenIdle: TimeInterval
    let refreshTokenAbsolute: TimeInterval
    let studioSession: TimeInterval

    init(_ lifetimes: TokenLifetimes) {
        accessToken = lifetimes.accessToken.timeInterval
        refreshTokenIdle = lifetimes.refreshTokenIdle.timeInterval
        refreshTokenAbsolute = lifetimes.refreshTokenAbsolute.timeInterval
        studioSession = lifetimes.studioSession.timeInterval
    }
}
