// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct ByteWriterTests {
    /// Writes through a writer into a buffer of `capacity` bytes and returns what was written.
    private func written(capacity: Int, _ write: (inout ByteWriter) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            var writer = ByteWriter(buffer, owner: "ByteWriterTests")
            write(&writer)
            count = writer.count
        }
    }

    @Test("Static text, strings small and large, non-ASCII and bytes come out as written, in order")
    func writesInOrder() {
        let large = String(repeating: "tiles:read ", count: 20)
        let bytes = written(capacity: 512) { writer in
            writer.write("a=")
            writer.write(contentsOf: "b")
            writer.write(contentsOf: "")
            writer.write(contentsOf: large)
            writer.write(contentsOf: "é😀")
            writer.write(UInt8(ascii: ";"))
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "a=b" + large + "é😀;")
    }

    @Test(
        "Decimals: zero, one digit, negatives and both ends of Int",
        arguments: [0, 7, -1, 42, 1_000, Int.max, Int.min]
    )
    func decimals(value: Int) {
        let bytes = written(capacity: 20) { $0.writeDecimal(value) }
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }

    /// One child process only: under ThreadSanitizer each exit test starts the whole instrumented test
    /// binary again; two of them beside the timed wire tests are the likeliest reason those missed their
    /// bounds in CI this session.
    /// `writeDecimal` and every other write go through the same check.
    @Test("Writing past the capacity traps instead of writing outside the buffer")
    func overflowTraps() async {
        await #expect(processExitsWith: .failure) {
            let bytes = [UInt8](unsafeUninitializedCapacity: 4) { buffer, count in
                var writer = ByteWriter(buffer, owner: "ByteWriterTests")
                writer.write(contentsOf: "12345")
                count = writer.count
            }
            _ = bytes
        }
    }
}
