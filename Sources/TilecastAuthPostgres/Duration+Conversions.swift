// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import Dispatch

extension Duration {
    /// Whole milliseconds, rounded up, for PostgreSQL settings such as `statement_timeout`.
    var wholeMillisecondsRoundedUp: Int {
        let (seconds, attoseconds) = components
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return Int.max }
        let (whole, rest) = attoseconds.quotientAndRemainder(dividingBy: attosecondsPerMillisecond)
        return Int(clamping: milliseconds.partialValue + whole + (rest > 0 ? 1 : 0))
    }

    /// The duration as a dispatch interval, for timers.
    var dispatchInterval: DispatchTimeInterval {
        .milliseconds(wholeMillisecondsRoundedUp)
    }
}
#endif
