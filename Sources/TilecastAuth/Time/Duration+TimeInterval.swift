// SPDX-License-Identifier: Apache-2.0

extension Duration {
    /// The duration in seconds, as a `TimeInterval` for date arithmetic.
    var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
