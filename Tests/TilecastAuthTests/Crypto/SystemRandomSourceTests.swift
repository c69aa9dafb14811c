// SPDX-License-Identifier: Apache-2.0

import CTilecastRandom
import Foundation
import Testing

@testable import TilecastAuth

#if canImport(Glibc)
import Glibc
#endif

struct SystemRandomSourceTests {
    /// Lengths around the vDSO's and getentropy's bounds: one byte, a secret, an exchange's 112 bytes,
    /// getentropy's 256-byte limit on either side, and several pages.
    static let lengths = [1, 15, 32, 112, 255, 256, 257, 4097, 65_536]

    /// ORs 64 fills of a zeroed buffer: a byte never written stays 0, and a written one has each of its
    /// bits set at least once with probability 1 − 2⁻⁶⁴.
    private static func everyByteWritten(length: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> Bool {
        var union = [UInt8](repeating: 0, count: length)
        var buffer = [UInt8](repeating: 0, count: length)
        for _ in 0..<64 {
            for index in buffer.indices { buffer[index] = 0 }
            buffer.withUnsafeMutableBytes { fill($0) }
            for index in union.indices { union[index] |= buffer[index] }
        }
        return union.allSatisfy { $0 == 0xFF }
    }

    @Test("Every byte of the buffer is written", arguments: lengths)
    func fillsEveryByte(length: Int) {
        let random = SystemRandomSource()
        #expect(Self.everyByteWritten(length: length) { random.fill($0) })
    }

    @Test("The getentropy path writes every byte too", arguments: lengths)
    func systemCallFillsEveryByte(length: Int) {
        #expect(Self.everyByteWritten(length: length) { SystemRandomSource.fillWithSystemCall($0) })
    }

    @Test("An empty buffer is left alone")
    func emptyBuffer() {
        var bytes: [UInt8] = []
        bytes.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        #expect(bytes.isEmpty)
    }

    @Test("Half the bits of a mebibyte are ones, within eleven standard deviations")
    func bitBalance() {
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        bytes.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        let ones = bytes.reduce(0) { $0 + $1.nonzeroBitCount }
        let bits = Double(bytes.count * 8)
        // A fair source gives bits/2 ± √(bits)/2 ≈ 1,448; a stuck or short fill misses by far more.
        #expect(abs(Double(ones) - bits / 2) < 11 * bits.squareRoot() / 2)
    }

    @Test("Eight threads drawing at once, each on its own state, never draw the same 32 bytes or a zero word")
    func concurrentThreadsDrawDistinctValues() {
        let threads = 8
        let draws = 20_000
        let values = LockedValue<[[UInt8]]>([])
        // Eight threads of their own, started together: concurrentPerform would use only as many
        // threads as there are cores. Each draws into one buffer, one 32-byte value after the other,
        // so that the draws of different threads overlap as much as they can. A state two threads used
        // at once would repeat output, and above all leave words zero where both wrote.
        let start = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        for _ in 0..<threads {
            finished.enter()
            Thread {
                let random = SystemRandomSource()
                var drawn = [UInt8](repeating: 0, count: draws * 32)
                start.wait()
                drawn.withUnsafeMutableBytes { buffer in
                    for offset in stride(from: 0, to: buffer.count, by: 32) {
                        random.fill(UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + 32]))
                    }
                }
                let mine = stride(from: 0, to: drawn.count, by: 32).map { Array(drawn[$0..<$0 + 32]) }
                values.withLock { $0 += mine }
                finished.leave()
            }.start()
        }
        for _ in 0..<threads { start.signal() }
        finished.wait()
        let all = values.withLock { $0 }
        #expect(all.count == threads * draws)
        #expect(Set(all).count == all.count)
        // A zero 64-bit word comes by chance once in 2⁶⁴.
        let zeroWords = all.reduce(0) { count, value in
            count
                + stride(from: 0, to: 32, by: 8).filter { offset in value[offset..<offset + 8].allSatisfy { $0 == 0 } }
                .count
        }
        #expect(zeroWords == 0)
    }

    /// What the fake vDSO function below answers, call by call.
    nonisolated(unsafe) private static var script: [Int] = []
    nonisolated(unsafe) private static var calls = 0

    /// A stand-in for the vDSO `getrandom`: writes 0xA5 and answers the next scripted count or error.
    private static let scripted: tilecast_vgetrandom_function = { buffer, length, _, _, _ in
        let answer = SystemRandomSourceTests.script[SystemRandomSourceTests.calls]
        SystemRandomSourceTests.calls += 1
        if answer > 0, let buffer {
            memset(buffer, 0xA5, min(answer, length))
        }
        return answer
    }

    /// `tilecast_random_fill_with` over `length` bytes with `script`: its result, and whether every byte
    /// was written.
    private static func fill(length: Int, script: [Int]) -> (result: Int32, complete: Bool, calls: Int) {
        Self.script = script
        Self.calls = 0
        var bytes = [UInt8](repeating: 0, count: length)
        let result = bytes.withUnsafeMutableBytes {
            tilecast_random_fill_with(scripted, nil, 0, $0.baseAddress, length)
        }
        return (result, bytes.allSatisfy { $0 == 0xA5 }, Self.calls)
    }

    @Test("The fill loop takes short counts and interruptions, and refuses errors, nothing and too much")
    func fillLoopAnswers() {
        // One test, in order: the scripted function's state is shared.
        let short = Self.fill(length: 112, script: [5, 7, 100])
        #expect(short.result == 0 && short.complete && short.calls == 3)
        let interrupted = Self.fill(length: 32, script: [-Int(EINTR), 10, -Int(EINTR), 22])
        #expect(interrupted.result == 0 && interrupted.complete && interrupted.calls == 4)
        #expect(Self.fill(length: 32, script: [10, -Int(EFAULT)]).result == -1)
        #expect(Self.fill(length: 32, script: [-Int(EAGAIN)]).result == -1)
        #expect(Self.fill(length: 32, script: [0]).result == -1)
        #expect(Self.fill(length: 32, script: [33]).result == -1)
        #expect(Self.fill(length: 0, script: []).result == 0)
    }

    #if os(Linux)
    /// The kernel's release, as (major, minor).
    private static func kernelVersion() -> (Int, Int)? {
        guard let release = try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8) else {
            return nil
        }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }

    @Test("On a kernel with the vDSO getrandom, secrets are read through it")
    func vdsoUsedWhereTheKernelHasIt() throws {
        let version = try #require(Self.kernelVersion())
        #if arch(x86_64)
        let since = (6, 11)
        #elseif arch(arm64)
        let since = (6, 14)
        #else
        let since = (Int.max, 0)
        #endif
        if version >= since {
            // Not a silent fall back to the system call on the machines CI runs on: the symbol is
            // found, and a fill on this thread and on a new one goes through it.
            #expect(SystemRandomSource.usesVDSO)
            var bytes = [UInt8](repeating: 0, count: 112)
            #expect(bytes.withUnsafeMutableBytes { SystemRandomSource.fillThroughVDSO($0) })
            let onNewThread = LockedValue(false)
            let done = DispatchSemaphore(value: 0)
            Thread {
                var bytes = [UInt8](repeating: 0, count: 112)
                let filled = bytes.withUnsafeMutableBytes { SystemRandomSource.fillThroughVDSO($0) }
                onNewThread.withLock { $0 = filled }
                done.signal()
            }.start()
            done.wait()
            #expect(onNewThread.withLock { $0 })
        }
        // And either way the bytes come.
        #expect(Self.everyByteWritten(length: 112) { SystemRandomSource().fill($0) })
    }

    /// The kibibytes of this process's droppable mappings (`dp` in smaps), where the per-thread states live.
    private static func droppableKiB() throws -> Int {
        // Read to the end: a /proc file reports size 0, and String(contentsOfFile:) stops after one read.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var total = 0
        var size = 0
        for line in smaps.split(separator: "\n") {
            if line.hasPrefix("Size:") {
                size = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
            } else if line.hasPrefix("VmFlags:"), line.split(separator: " ").contains("dp") {
                total += size
            }
        }
        return total
    }

    @Test(
        "A thread's state is unmapped when the thread exits",
        .enabled(if: SystemRandomSource.usesVDSO, "needs the vDSO getrandom (Linux 6.11 and later on x86_64)")
    )
    func exitedThreadsReturnTheirState() throws {
        let before = try Self.droppableKiB()
        // 256 threads, 16 at a time: a page each would stay mapped if exits leaked their state — 1 MiB.
        let batches = 16
        let perBatch = 16
        for _ in 0..<batches {
            let finished = DispatchSemaphore(value: 0)
            for _ in 0..<perBatch {
                Thread {
                    var bytes = [UInt8](repeating: 0, count: 32)
                    bytes.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
                    finished.signal()
                }.start()
            }
            for _ in 0..<perBatch { finished.wait() }
        }
        // The threads signal just before they exit; give their exits a moment.
        var after = try Self.droppableKiB()
        for _ in 0..<100 where after - before >= 512 {
            Thread.sleep(forTimeInterval: 0.01)
            after = try Self.droppableKiB()
        }
        // Other tests running alongside map pages of their own on threads new to them (the cooperative
        // pool's, dispatch's, a PostgreSQL store's executor): tens of pages, not the 256 a leak would.
        #expect(after - before < 512)
    }

    @Test("A forked child does not draw what its parent draws next")
    func forkedChildDrawsItsOwnBytes() throws {
        let random = SystemRandomSource()
        // This thread's state exists and has produced output before the fork.
        var before = [UInt8](repeating: 0, count: 32)
        before.withUnsafeMutableBytes { random.fill($0) }

        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        let writeEnd = pipeEnds[1]
        // The child's buffer exists before the fork: the child only draws, writes and exits — no
        // allocation, nothing that could wait on a lock another thread of the parent held at the fork.
        let drawn = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 8)
        defer { drawn.deallocate() }
        let child = fork()
        // The child's branch comes before anything of the test library: `#require` in the child once hung
        // it for good (CI, under ThreadSanitizer), waiting in `swift_once` for a lazy initialisation that
        // another thread of the parent was running at the fork and that, in the child, nothing finishes.
        if child == 0 {
            random.fill(drawn)
            _exit(write(writeEnd, drawn.baseAddress, 32) == 32 ? 0 : 1)
        }
        try #require(child > 0)
        close(pipeEnds[1])
        var parentDraw = [UInt8](repeating: 0, count: 32)
        parentDraw.withUnsafeMutableBytes { random.fill($0) }
        // Bounded: a child that hangs is killed after 30 s, and the test fails instead of hanging too.
        var ready = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
        let answered = poll(&ready, 1, 30_000) == 1
        if !answered {
            kill(child, SIGKILL)
        }
        var childDraw = [UInt8](repeating: 0, count: 32)
        let read = answered ? childDraw.withUnsafeMutableBytes { Glibc.read(pipeEnds[0], $0.baseAddress, 32) } : 0
        close(pipeEnds[0])
        var status: Int32 = 0
        _ = waitpid(child, &status, 0)
        #expect(answered, "the forked child did not answer within 30 s")
        #expect(status == 0)
        #expect(read == 32)
        // A state copied into the child unwiped would give the child exactly the parent's next bytes.
        #expect(childDraw != parentDraw)
        #expect(childDraw != before)
    }
    #endif
}
