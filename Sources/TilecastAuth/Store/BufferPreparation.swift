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
/// buffer that is never taken is freed with the preparation; one the table gave up on while it was being
/// made, or replaced with a request for another size, is freed by its job when done. Preparations of all
/// stores run one at a time on one serial queue at utility priority: at most one thread spends its time
/// on them.
final class BufferPreparation<Buffer: Sendable>: Sendable {
    private enum State: Sendable {
        case idle
        /// A buffer of `size` is being made, by the job numbered `job`.
        case preparing(size: Int, job: Int)
        /// A buffer of `size` is ready to be taken.
        case ready(Buffer, size: Int)
    }

    private struct Slot: Sendable {
        var state = State.idle
        /// The number of the last job started. A job whose number is not the one the state waits for —
        /// given up by ``take(size:abandoningLate:)``, or replaced by a request for another size — frees
        /// its buffer when done instead of leaving it ready.
        var jobs = 0
        /// Jobs started and not yet finished, wanted or not.
        var unfinished = 0
        /// Buffers taken, for tests, which check that what a table used was the one prepared.
        var taken = 0
    }

    private let slot = LockedValue(Slot())

    init() {}

    /// Starts `make`, which makes a buffer of `size` (elements, buckets: whatever the caller counts), on
    /// the background queue — unless one of that size is ready or being made. A buffer of another size,
    /// ready or being made, is dropped: the table's needs have moved on. (One being made cannot be called
    /// back; its job frees it when done.)
    func prepare(size: Int, _ make: @escaping @Sendable () -> Buffer) {
        let (job, dropped): (Int?, Buffer?) = slot.withLock { slot in
            var dropped: Buffer?
            switch slot.state {
            case .ready(_, let readySize) where readySize == size, .preparing(let readySize, _) where readySize == size:
                return (nil, nil)
            case .ready(let buffer, _):
                dropped = buffer
            case .idle, .preparing:
                break
            }
            slot.jobs += 1
            slot.unfinished += 1
            slot.state = .preparing(size: size, job: slot.jobs)
            return (slot.jobs, dropped)
        }
        Self.release(dropped)
        guard let job else { return }
        preparationQueue.async { [self] in
            // Given up or replaced before it started (the queue is shared by every store): nothing to make.
            let wanted = slot.withLock { slot in
                guard case .preparing(_, job) = slot.state else {
                    slot.unfinished -= 1
                    return false
                }
                return true
            }
            guard wanted else { return }
            // Moved into the slot, not copied: a local still holding it after the unlock would make the
            // buffer a table takes in that moment not uniquely referenced — and its first write a copy.
            var made = Optional(make())
            let unwanted: Buffer? = slot.withLock { slot in
                slot.unfinished -= 1
                guard case .preparing(_, job) = slot.state else { return made.take() }
                slot.state = .ready(made.take()!, size: size)
                return nil
            }
            // Given up or replaced while it was being made: freed here, on the background queue.
            withExtendedLifetime(unwanted) {}
        }
    }

    /// The prepared buffer if one of `size` is ready; a ready buffer of another size is dropped. Never
    /// waits for a preparation under way: with `abandoningLate`, it is given up — its job frees the
    /// buffer when done — for a caller whose next request will be of another size (an index's growth, a
    /// first chunk's); without, it stays to be taken later (a next chunk, the size of the one after).
    func take(size: Int, abandoningLate: Bool) -> Buffer? {
        let (taken, dropped): (Buffer?, Buffer?) = slot.withLock { slot in
            if case .preparing = slot.state, abandoningLate {
                slot.state = .idle
            }
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

    /// Whether no job is queued or running — wanted, given up or replaced: for tests, which wait for them
    /// to finish.
    var isSettled: Bool { slot.withLock { $0.unfinished == 0 } }
}

/// What tells a value holding a ``BufferPreparation`` — a ``ChunkedArray``, a ``TableIndex`` — whether a
/// copy of it shares the preparation: nothing else refers to it. The preparation itself cannot tell, as
/// its job holds it too while it runs.
final class PreparationOwner: Sendable {}

/// The one queue every ``BufferPreparation`` runs on.
private let preparationQueue = DispatchQueue(label: "TilecastAuth.InMemoryGrantStore.preparation", qos: .utility)
