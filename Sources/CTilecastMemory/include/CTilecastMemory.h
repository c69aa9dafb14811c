// SPDX-License-Identifier: Apache-2.0
//
// A cache hint Swift cannot express: the in-memory store asks for the index buckets an operation will
// write before it reads anything, so that the processor fetches them at once instead of one miss after
// another.

#ifndef CTILECAST_MEMORY_H
#define CTILECAST_MEMORY_H

/// Asks the processor to bring the cache line holding `address` into every cache level, for writing
/// (PREFETCHW on x86-64, PRFM PSTL1KEEP on AArch64). Only a hint: it never faults, whatever the
/// address, and changes no memory.
static inline void tilecast_prefetch_for_writing(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
