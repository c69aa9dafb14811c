// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a POSIX mutex: every access runs inside ``withLock(_:)``, one caller at a time.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with futex system calls that ThreadSanitizer cannot
/// see, so every access it protects is reported as a race, and real races drown among the false ones. A
/// `pthread_mutex_t` is intercepted by ThreadSanitizer, so the whole suite runs clean under
/// `swift test --sanitize=thread` and every report it makes is real. Uncontended, the two cost the same.
///
/// With glibc the mutex is adaptive (`PTHREAD_MUTEX_ADAPTIVE_NP`): a caller that finds it held spins a
/// bounded while (glibc's `glibc.pthread.mutex_spin_count`, 100 rounds by default) before it sleeps in
/// the kernel. The locks here are held for a microsecond or two, far less than a sleep and a wake-up take,
/// so with a default mutex two callers on two cores spent their time putting each other to sleep: two
/// concurrent code exchanges on the in-memory store did no more per second than one
/// (`Docs/Performance.md`, "Two callers").
///
/// The value lives in memory of its own rather than in a stored property: Swift checks exclusive access
/// to a class's `var` at run time, with a call into the runtime on each side of every access (about 45
/// instructions, counted with callgrind, four times per code exchange), and the mutex already makes
/// every access exclusive — a caller that came back into the lock from `body` would wait on the mutex
/// forever before the check could report it.
///
/// Visible to the package's own modules only.
package final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read or written between pthread_mutex_lock and pthread_mutex_unlock.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        self.mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        self.mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        defer { pthread_mutexattr_destroy(&attributes) }
        #if canImport(Glibc)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        let result = pthread_mutex_init(mutex, &attributes)
        precondition(result == 0, "pthread_mutex_init failed with \(result)")
        self.value = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value. `body` must not suspend or call back into the same
    /// lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
