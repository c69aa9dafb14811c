// SPDX-License-Identifier: Apache-2.0
//
// Cache hints Swift cannot express: the in-memory store asks for the index buckets an operation will
// write before it reads anything, and for the records an account's list leads to while it follows the
// list, so that the processor fetches them at once instead of one miss after another.

#ifndef CTILECAST_MEMORY_H
#define CTILECAST_MEMORY_H

/// Asks the processor to bring the cache line holding `address` into every cache level, for writing
/// (PREFETCHW on x86-64, PRFM PSTL1KEEP on AArch64). Only a hint: it never faults, whatever the
/// address, and changes no memory.
static inline void tilecast_prefetch_for_writing(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

/// Asks the processor to bring the cache line holding `address` into every cache level, for reading
/// (PREFETCHT0 on x86-64, PRFM PLDL1KEEP on AArch64): for a record that will be read while another
/// miss, on which finding it depends, is still being waited for. Only a hint, like the one above.
static inline void tilecast_prefetch_for_reading(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
