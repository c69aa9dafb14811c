// SPDX-License-Identifier: Apache-2.0
//
// SHA-256 with the x86 SHA extensions. The instructions keep the eight working variables in two
// registers, {A, B, E, F} and {C, D, G, H}; SHA256RNDS2 runs two rounds (FIPS 180-4 §6.2.2 step 3)
// with the two round-constant-plus-message words in the low half of its third operand, and
// SHA256MSG1/SHA256MSG2 compute four words of the message schedule (§6.2.2 step 1) between them.

#include "CTilecastSHA256.h"

#if defined(__x86_64__)

#include <cpuid.h>
#include <immintrin.h>
#include <string.h>

int tilecast_sha256_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return 0;
    }
    // SSSE3 (PSHUFB, PALIGNR) and SSE4.1 (PBLENDW) are used beside the SHA instructions.
    const int ssse3 = (ecx >> 9) & 1;
    const int sse41 = (ecx >> 19) & 1;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
        return 0;
    }
    const int sha = (ebx >> 29) & 1;
    return ssse3 && sse41 && sha;
}

// The round constants K of FIPS 180-4 §4.2.2.
static const uint32_t round_constants[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define TILECAST_SHA_TARGET __attribute__((target("sha,ssse3,sse4.1")))

// One 64-byte block (§6.2.2). `abef` and `cdgh` hold the intermediate hash value in the
// instructions' layout. The schedule is kept as four registers of four words each, W[4g..4g+3]
// in register g mod 4: W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], where SHA256MSG1 adds
// the σ0 terms to W[t-16], PALIGNR brings W[t-7], and SHA256MSG2 adds the σ1 terms. The schedule
// is the caller's, so that the caller can wipe it: where the compiler keeps it on the stack, its last
// sixteen words give back the whole block (the schedule runs backwards), and the block is a secret.
TILECAST_SHA_TARGET
static inline void compress(__m128i *abef, __m128i *cdgh, const uint8_t *block, __m128i schedule[4]) {
    const __m128i big_endian = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    const __m128i saved_abef = *abef;
    const __m128i saved_cdgh = *cdgh;
    __m128i state0 = *abef;
    __m128i state1 = *cdgh;

    for (int group = 0; group < 16; group++) {
        __m128i words;
        if (group < 4) {
            words = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * group)), big_endian);
        } else {
            __m128i sum = _mm_sha256msg1_epu32(schedule[group & 3], schedule[(group + 1) & 3]);
            sum = _mm_add_epi32(sum, _mm_alignr_epi8(schedule[(group + 3) & 3], schedule[(group + 2) & 3], 4));
            words = _mm_sha256msg2_epu32(sum, schedule[(group + 3) & 3]);
        }
        schedule[group & 3] = words;
        __m128i message = _mm_add_epi32(words, _mm_load_si128((const __m128i *)(round_constants + 4 * group)));
        state1 = _mm_sha256rnds2_epu32(state1, state0, message);
        message = _mm_shuffle_epi32(message, 0x0E);
        state0 = _mm_sha256rnds2_epu32(state0, state1, message);
    }

    *abef = _mm_add_epi32(state0, saved_abef);
    *cdgh = _mm_add_epi32(state1, saved_cdgh);
}

// The digest, A…H, from the instructions' layout: each word in a lane of its own.
TILECAST_SHA_TARGET
static inline void store_digest(uint32_t digest[8], __m128i abef, __m128i cdgh) {
    uint32_t lanes[8];
    _mm_storeu_si128((__m128i *)lanes, abef);      // F, E, B, A
    _mm_storeu_si128((__m128i *)(lanes + 4), cdgh); // H, G, D, C
    digest[0] = lanes[3];
    digest[1] = lanes[2];
    digest[2] = lanes[7];
    digest[3] = lanes[6];
    digest[4] = lanes[1];
    digest[5] = lanes[0];
    digest[6] = lanes[5];
    digest[7] = lanes[4];
}

TILECAST_SHA_TARGET
void tilecast_sha256_hardware_hash(const uint8_t *bytes, size_t count, uint32_t digest[8]) {
    // H(0), §5.3.3, as {A, B, E, F} and {C, D, G, H} (lanes listed from the highest).
    __m128i abef = _mm_set_epi32(0x6a09e667, 0xbb67ae85, 0x510e527f, 0x9b05688c);
    __m128i cdgh = _mm_set_epi32(0x3c6ef372, 0xa54ff53a, 0x1f83d9ab, 0x5be0cd19);
    __m128i schedule[4];

    size_t offset = 0;
    for (; count - offset >= 64; offset += 64) {
        compress(&abef, &cdgh, bytes + offset, schedule);
    }

    // Padding, §5.1.1: 0x80, zeros, the length in bits as a 64-bit big-endian integer.
    uint8_t tail[128] __attribute__((aligned(16)));
    memset(tail, 0, sizeof tail);
    const size_t tail_count = count - offset;
    if (tail_count > 0) {
        memcpy(tail, bytes + offset, tail_count);
    }
    tail[tail_count] = 0x80;
    const size_t tail_blocks = tail_count < 56 ? 1 : 2;
    const uint64_t bit_length = (uint64_t)count * 8;
    for (int index = 0; index < 8; index++) {
        tail[tail_blocks * 64 - 1 - index] = (uint8_t)(bit_length >> (8 * index));
    }
    compress(&abef, &cdgh, tail, schedule);
    if (tail_blocks == 2) {
        compress(&abef, &cdgh, tail + 64, schedule);
    }

    store_digest(digest, abef, cdgh);
    // Neither the input nor its schedule is left behind in this frame.
    memset(tail, 0, sizeof tail);
    memset(schedule, 0, sizeof schedule);
    __asm__ __volatile__("" : : "r"(tail), "r"(schedule) : "memory");
}

// Two or three messages of one block each, hashed together: the rounds of one compression wait on the
// latency of SHA256RNDS2 (each pair of rounds needs the previous pair's result), so a lone hash leaves
// the unit idle most of the time; the independent compressions of other messages fill it. On the CI
// machine (AMD EPYC, Zen 4) three hashes of 47 bytes take 83 ns together against 73 ns each alone.
//
// The schedules and the round inputs are the caller's, to be wiped as `compress`'s is.
TILECAST_SHA_TARGET
static inline void compress_together(
    __m128i abef[3], __m128i cdgh[3], const uint8_t *const blocks[3], const int count,
    __m128i schedule[3][4], __m128i message[3]
) {
    const __m128i big_endian = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i state0[3], state1[3];
    for (int m = 0; m < count; m++) {
        state0[m] = abef[m];
        state1[m] = cdgh[m];
    }
    for (int group = 0; group < 16; group++) {
        const __m128i constants = _mm_load_si128((const __m128i *)(round_constants + 4 * group));
        for (int m = 0; m < count; m++) {
            __m128i words;
            if (group < 4) {
                words = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks[m] + 16 * group)), big_endian);
            } else {
                __m128i sum = _mm_sha256msg1_epu32(schedule[m][group & 3], schedule[m][(group + 1) & 3]);
                sum = _mm_add_epi32(
                    sum, _mm_alignr_epi8(schedule[m][(group + 3) & 3], schedule[m][(group + 2) & 3], 4)
                );
                words = _mm_sha256msg2_epu32(sum, schedule[m][(group + 3) & 3]);
            }
            schedule[m][group & 3] = words;
            message[m] = _mm_add_epi32(words, constants);
        }
        for (int m = 0; m < count; m++) {
            state1[m] = _mm_sha256rnds2_epu32(state1[m], state0[m], message[m]);
        }
        for (int m = 0; m < count; m++) {
            message[m] = _mm_shuffle_epi32(message[m], 0x0E);
        }
        for (int m = 0; m < count; m++) {
            state0[m] = _mm_sha256rnds2_epu32(state0[m], state1[m], message[m]);
        }
    }
    for (int m = 0; m < count; m++) {
        abef[m] = _mm_add_epi32(state0[m], abef[m]);
        cdgh[m] = _mm_add_epi32(state1[m], cdgh[m]);
    }
}

// The one padded block (§5.1.1) of a message of at most 55 bytes.
static inline void pad_single_block(uint8_t block[64], const uint8_t *bytes, size_t count) {
    memset(block, 0, 64);
    if (count > 0) {
        memcpy(block, bytes, count);
    }
    block[count] = 0x80;
    const uint64_t bit_length = (uint64_t)count * 8;
    for (int index = 0; index < 8; index++) {
        block[63 - index] = (uint8_t)(bit_length >> (8 * index));
    }
}

TILECAST_SHA_TARGET
static inline void hash_single_blocks(
    const uint8_t *const messages[3], const size_t counts[3], uint32_t *const digests[3], const int count
) {
    uint8_t padded[3 * 64] __attribute__((aligned(16)));
    const uint8_t *blocks[3];
    __m128i abef[3], cdgh[3], schedule[3][4], message[3];
    for (int m = 0; m < count; m++) {
        pad_single_block(padded + 64 * m, messages[m], counts[m]);
        blocks[m] = padded + 64 * m;
        abef[m] = _mm_set_epi32(0x6a09e667, 0xbb67ae85, 0x510e527f, 0x9b05688c);
        cdgh[m] = _mm_set_epi32(0x3c6ef372, 0xa54ff53a, 0x1f83d9ab, 0x5be0cd19);
    }
    compress_together(abef, cdgh, blocks, count, schedule, message);
    for (int m = 0; m < count; m++) {
        store_digest(digests[m], abef[m], cdgh[m]);
    }
    // Neither the inputs nor their schedules are left behind in this frame.
    memset(padded, 0, sizeof padded);
    memset(schedule, 0, sizeof schedule);
    memset(message, 0, sizeof message);
    __asm__ __volatile__("" : : "r"(padded), "r"(schedule), "r"(message) : "memory");
}

TILECAST_SHA_TARGET
void tilecast_sha256_hardware_hash_short2(
    const uint8_t *first, size_t first_count, uint32_t first_digest[8],
    const uint8_t *second, size_t second_count, uint32_t second_digest[8]
) {
    const uint8_t *const messages[3] = {first, second, NULL};
    const size_t counts[3] = {first_count, second_count, 0};
    uint32_t *const digests[3] = {first_digest, second_digest, NULL};
    hash_single_blocks(messages, counts, digests, 2);
}

TILECAST_SHA_TARGET
void tilecast_sha256_hardware_hash_short3(
    const uint8_t *first, size_t first_count, uint32_t first_digest[8],
    const uint8_t *second, size_t second_count, uint32_t second_digest[8],
    const uint8_t *third, size_t third_count, uint32_t third_digest[8]
) {
    const uint8_t *const messages[3] = {first, second, third};
    const size_t counts[3] = {first_count, second_count, third_count};
    uint32_t *const digests[3] = {first_digest, second_digest, third_digest};
    hash_single_blocks(messages, counts, digests, 3);
}

#else

int tilecast_sha256_hardware_available(void) { return 0; }

void tilecast_sha256_hardware_hash(const uint8_t *bytes, size_t count, uint32_t digest[8]) {
    (void)bytes;
    (void)count;
    (void)digest;
    __builtin_trap();
}

void tilecast_sha256_hardware_hash_short2(
    const uint8_t *first, size_t first_count, uint32_t first_digest[8],
    const uint8_t *second, size_t second_count, uint32_t second_digest[8]
) {
    (void)first, (void)first_count, (void)first_digest;
    (void)second, (void)second_count, (void)second_digest;
    __builtin_trap();
}

void tilecast_sha256_hardware_hash_short3(
    const uint8_t *first, size_t first_count, uint32_t first_digest[8],
    const uint8_t *second, size_t second_count, uint32_t second_digest[8],
    const uint8_t *third, size_t third_count, uint32_t third_digest[8]
) {
    (void)first, (void)first_count, (void)first_digest;
    (void)second, (void)second_count, (void)second_digest;
    (void)third, (void)third_count, (void)third_digest;
    __builtin_trap();
}

#endif
