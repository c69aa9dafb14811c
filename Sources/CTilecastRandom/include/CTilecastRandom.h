// SPDX-License-Identifier: Apache-2.0
//
// The kernel's CSPRNG through the vDSO, where the kernel offers it (Linux 6.11 and later on x86-64, 6.14
// on AArch64): the same generator as getrandom(2) — ChaCha20 keyed from the kernel's pool, rekeyed
// whenever the kernel reseeds — run in the caller's thread without a system call. Each thread gets its
// own state, in memory the kernel asks for and wipes when the process forks.

#ifndef CTILECAST_RANDOM_H
#define CTILECAST_RANDOM_H

#include <stddef.h>

/// Fills `count` bytes at `buffer` from the kernel's CSPRNG through its vDSO `getrandom`.
///
/// Returns 0 when every byte was written; -1 when the vDSO has no `getrandom`, this thread's state could
/// not be set up, or the call failed — the caller then reads the bytes with a system call instead. Bytes
/// already written by a failed call are overwritten by that fallback.
int tilecast_random_fill(void *buffer, size_t count);

/// Whether this process found the vDSO `getrandom` (checked once; for tests and diagnostics).
int tilecast_random_vdso_available(void);

#endif
