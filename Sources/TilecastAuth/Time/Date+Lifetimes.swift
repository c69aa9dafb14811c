// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Date {
    /// The earlier of `self + seconds` and `cap`: when something issued now with a lifetime of `seconds`
    /// expires, given that nothing of a grant outlives the grant.
    func adding(_ seconds: TimeInterval, cappedAt cap: Date) -> Date {
        Swift.min(addingTimeInterval(seconds), cap)
    }

    /// Whole seconds from `self` to `later`, rounded down and never negative: what `expires_in` and
    /// `Max-Age` promise. A date too far away to count in seconds saturates instead of trapping.
    func wholeSeconds(until later: Date) -> Int {
        let seconds = later.timeIntervalSince(self).rounded(.down)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return seconds < Double(Int32.max) ? Int(seconds) : Int(Int32.max)
    }
}
