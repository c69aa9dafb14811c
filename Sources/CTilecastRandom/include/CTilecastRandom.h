// SPDX-License-Identifier: Apache-2.0
//
// The kernel's CSPRNG through the vDSO, where the kernel offers it (Linux 6.11 and later on x86-64, 6.14
// on AArch64): a ChaCha20 generator of the kernel's, keyed from getrandom(2) and rekeyed whenever the
// kernel reseeds, run in the caller's thread without a system call. Each thread gets its own state, in
// memory the kernel asks for and wipes when the process forks.

#ifndef CTILECAST_RANDOM_H
#define CTILECAST_RANDOM_H

#include <stddef.h>
#include <sys/types.h>

/// The vDSO's `getrandom`: `(buffer, length, flags, state, state size)` to a byte count or a negative errno.
typedef ssize_t (*tilecast_vgetrandom_function)(void *, size_t, unsigned int, void *, size_t);

/// Fills `count` bytes at `buffer` from the kernel's CSPRNG through its vDSO `getrandom`.
///
/// Returns 0 when every byte was written; -1 when the vDSO has no `getrandom`, this thread's state could
/// not be set up, or the call failed — the caller then reads the bytes with a system call instead. Bytes
/// already written by a failed call are overwritten by that fallback.
int tilecast_random_fill(void *buffer, size_t count);

/// Whether this process found the vDSO `getrandom` (looked up once, before `main`).
int tilecast_random_vdso_available(void);

/// `tilecast_random_fill`'s loop, with the function and state given: calls `function` until `count` bytes
/// are written, again after `-EINTR`; 0 when every byte was written, -1 at any other error, a count of
/// zero, or a count larger than asked for. Separate so that tests can drive it with a function that
/// answers short, interrupted or wrong.
int tilecast_random_fill_with(
    tilecast_vgetrandom_function function, void *state, size_t state_size, void *buffer, size_t count
);

#endif
