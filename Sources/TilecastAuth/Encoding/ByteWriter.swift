// SPDX-License-Identifier: Apache-2.0

/// Writes bytes into a buffer the caller sized up front: the one loop under ``JSONWriter`` and the
/// `Set-Cookie` value (``SessionCookie/headerValue``).
///
/// Every write checks that it fits before it copies, so a caller whose size bound is wrong traps
/// instead of writing past the buffer. There is no growth, no uniqueness check and no per-byte call, which
/// is what `Array.append` and string interpolation cost on the path of every response.
struct ByteWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private var cursor: UnsafeMutablePointer<UInt8>
    private let end: UnsafeMutablePointer<UInt8>
    /// Names the writer's user in the message of a trap.
    private let owner: StaticString

    /// A writer at the start of `buffer`, which must not be empty.
    init(_ buffer: UnsafeMutableBufferPointer<UInt8>, owner: StaticString) {
        start = buffer.baseAddress!
        cursor = start
        end = start + buffer.count
        self.owner = owner
    }

    /// How many bytes have been written.
    var count: Int {
        cursor - start
    }

    @inline(__always)
    mutating func write(_ source: UnsafePointer<UInt8>, count: Int) {
        precondition(end - cursor >= count, "\(owner): the output outgrew its capacity")
        cursor.update(from: source, count: count)
        cursor += count
    }

    /// Writes raw bytes as they are, whatever type their memory is bound to: copied untyped.
    @inline(__always)
    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        precondition(end - cursor >= bytes.count, "\(owner): the output outgrew its capacity")
        UnsafeMutableRawPointer(cursor).copyMemory(from: source, byteCount: bytes.count)
        cursor += bytes.count
    }

    @inline(__always)
    mutating func write(_ byte: UInt8) {
        precondition(cursor < end, "\(owner): the output outgrew its capacity")
        cursor.pointee = byte
        cursor += 1
    }

    /// Writes text known at compile time.
    @inline(__always)
    mutating func write(_ text: StaticString) {
        write(text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// Writes a string's UTF-8 bytes as they are.
    mutating func write(contentsOf text: String) {
        text.withLentUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes a decimal integer, with a minus sign when negative: at most 20 bytes.
    mutating func writeDecimal(_ value: Int) {
        // 19 digits hold the largest magnitude, Int.min's 9,223,372,036,854,775,808.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 19) { digits in
            var magnitude = value.magnitude
            var index = digits.count
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                write(UInt8(ascii: "-"))
            }
            write(digits.baseAddress! + index, count: digits.count - index)
        }
    }
}
