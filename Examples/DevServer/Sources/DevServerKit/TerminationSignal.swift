// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation

/// SIGINT and SIGTERM, caught instead of ending the process, so that the server can stop gracefully.
public enum TerminationSignal {
    /// Returns when the process receives SIGINT or SIGTERM.
    public static func wait() async {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let received = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { received.signal() }
            source.resume()
            return source
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                received.wait()
                continuation.resume()
            }
        }
        sources.forEach { $0.cancel() }
    }
}
