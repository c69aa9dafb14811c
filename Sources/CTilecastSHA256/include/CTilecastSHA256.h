// SPDX-License-Identifier: Apache-2.0
//
// SHA-256 on the processor's own instructions, where it has them: the x86 SHA extensions
// (SHA256RNDS2, SHA256MSG1, SHA256MSG2). TilecastAuth's portable Swift implementation is used
// everywhere else, and is what this one is tested against.

#ifndef CTILECAST_SHA256_H
#define CTILECAST_SHA256_H

#include <stddef.h>
#include <stdint.h>

/// 1 when this processor runs `tilecast_sha256_hardware_hash`, 0 otherwise. Asks the processor
/// (CPUID) every time it is called; the caller keeps the answer.
int tilecast_sha256_hardware_available(void);

/// SHA-256 (FIPS 180-4 §6.2) of `count` bytes at `bytes`, the digest written to `digest` as eight
/// words, the first word of the digest first. Only to be called when
/// `tilecast_sha256_hardware_available()` returned 1.
void tilecast_sha256_hardware_hash(const uint8_t *bytes, size_t count, uint32_t digest[8]);

// Two or three messages of at most 55 bytes each (one block once padded), hashed together: the
// digests of tilecast_sha256_hardware_hash of each, in about the time of one.
void tilecast_sha256_hardware_hash_short2(
    const uint8_t *first, size_t first_count, uint32_t first_digest[8],
    const uint8_t *second, size_t second_count, uint32_t second_digest[8]
);
void tilecast_sha256_hardware_hash_short3(
    const uint8_t *first, size_t first_count, uint32_t first_digest[8],
    const uint8_t *second, size_t second_count, uint32_t second_digest[8],
    const uint8_t *third, size_t third_count, uint32_t third_digest[8]
);

#endif
