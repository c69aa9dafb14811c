// SPDX-License-Identifier: Apache-2.0

import Dispatch

/// One large buffer made ahead of need on a background thread, so that a table growing inside the
/// store's lock takes memory that is already allocated and resident instead of waiting for it.
///
/// A store created without a size grows as it goes: a new chunk of records (4 to 8 MiB) or a larger
/// index. The first write to each of its pages waits while the kernel backs the page — a 2 MiB huge page
/// on Linux with transparent huge pages — and on a virtual machine whose host backs guest memory on first
/// touch, one such wait measured 20–30 ms on the CI machine, with every request queued behind the lock
/// (`Docs/Performance.md`, "Single writes and the store's reservation"). So a table that is half way
/// through its last chunk, or part way to its index's next growth, asks for the next one here; a
/// background thread allocates it and writes a byte to each of its pages (``LargeBuffers/populate(_:)``),
/// and the table takes it when it needs it. If it is not ready by then the table allocates as before:
/// nothing ever waits for a preparation.
///
/// The buffer belongs to the preparation until it is taken — the background thread is the only one that
/// touches it before, the table the only one after — so no memory is shared while being written. A
/// buffer that is never taken is freed with the preparation. Preparations of all stores run one at a time
/// on one serial queue at utility priority: at most one thread spends its time on them.
final class BufferPreparation<Buffer: Sendable>: Sendable {
    private enum State: Sendable {
        case idle
        /// A buffer of `size` is being made.
        case preparing(size: Int)
        /// A buffer of `size` is ready to be taken.
        case ready(Buffer, size: Int)
    }

    private struct Slot: Sendable {
        var state = State.idle
        /// Buffers taken, for tests, which check that what a table used was the one prepared.
        var taken = 0
    }

    private let slot = LockedValue(Slot())

    init() {}

    /// Starts `make`, which makes a buffer of `size` (elements, buckets: whatever the caller counts), on
    /// the background queue — unless one of that size is ready or being made, or one of another size is
    /// being made (it cannot be called back; the table allocates as before if it does not fit). A ready
    /// buffer of another size is dropped: the table's needs have moved on.
    func prepare(size: Int, _ make: @escaping @Sendable () -> Buffer) {
        let (starts, dropped): (Bool, Buffer?) = slot.withLock { slot in
            switch slot.state {
            case .idle:
                slot.state = .preparing(size: size)
                return (true, nil)
            case .ready(let buffer, let readySize) where readySize != size:
                slot.state = .preparing(size: size)
                return (true, buffer)
            case .ready, .preparing:
                return (false, nil)
            }
        }
        Self.release(dropped)
        guard starts else { return }
        preparationQueue.async { [self] in
            // Moved into the slot, not copied: a local still holding it after the unlock would make the
            // buffer a table takes in that moment not uniquely referenced — and its first write a copy.
            var made = Optional(make())
            slot.withLock { $0.state = .ready(made.take()!, size: size) }
        }
    }

    /// The prepared buffer if one of `size` is ready; a ready buffer of another size is dropped. Never
    /// waits for a preparation under way.
    func take(size: Int) -> Buffer? {
        let (taken, dropped): (Buffer?, Buffer?) = slot.withLock { slot in
            guard case .ready(let buffer, let readySize) = slot.state else { return (nil, nil) }
            slot.state = .idle
            guard readySize == size else { return (nil, buffer) }
            slot.taken += 1
            return (buffer, nil)
        }
        Self.release(dropped)
        return taken
    }

    /// Frees a dropped buffer on the background queue: the caller holds the store's lock, and giving
    /// back megabytes of resident memory (`munmap`) is work it should not wait for.
    private static func release(_ dropped: Buffer?) {
        guard let dropped else { return }
        preparationQueue.async { withExtendedLifetime(dropped) {} }
    }

    /// How many prepared buffers were taken: for tests.
    var taken: Int { slot.withLock { $0.taken } }

    /// Whether no preparation is under way: for tests, which wait for one to finish.
    var isSettled: Bool {
        slot.withLock { slot in
            if case .preparing = slot.state { return false }
            return true
        }
    }
}

/// The one queue every ``BufferPreparation`` runs on.
private let preparationQueue = DispatchQueue(label: "TilecastAuth.InMemoryGrantStore.preparation", qos: .utility)
