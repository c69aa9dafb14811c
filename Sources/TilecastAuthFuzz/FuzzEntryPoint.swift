// SPDX-License-Identifier: Apache-2.0

import Dispatch
import TilecastAuth
import TilecastAuthVerification

/// The violation a finished run reported, handed from its task to the fuzzer's thread.
private final class Verdict: Sendable {
    let violation = LockedValue<String?>(nil)
}

/// libFuzzer's entry point: one input through `handle(request:)` against a freshly seeded world. A
/// broken property traps, which libFuzzer records as a crash with the input that caused it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let verdict = Verdict()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let violation = await FuzzHarness.run(input)
        verdict.violation.withLock { $0 = violation }
        done.signal()
    }
    done.wait()
    if let violation = verdict.violation.withLock({ $0 }) {
        fatalError("fuzz property broken: \(violation)")
    }
    return 0
}
