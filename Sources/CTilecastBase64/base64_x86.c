// SPDX-License-Identifier: Apache-2.0
//
// Base64url of 32 bytes, twelve bytes at a time in a vector register, after Wojciech Muła's method
// ("Base64 encoding with SIMD instructions", 2016): a byte shuffle puts each 3-byte group's bytes where
// two 16-bit multiplications can move its four 6-bit values into four bytes, and a second shuffle,
// used as a 16-entry table, gives each value the offset that turns it into its character of the
// RFC 4648 §5 alphabet. 32 bytes are two groups of twelve (32 characters) and eight bytes more, of
// which a third shuffle makes two groups of three and a last group of the two bytes and a zero, whose
// fourth character is left out (11 characters).

#include "CTilecastBase64.h"

#if defined(__x86_64__)

#include <cpuid.h>
#include <immintrin.h>

int tilecast_base64url_vector_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return 0;
    }
    return (ecx >> 9) & 1;  // SSSE3
}

#define TILECAST_BASE64_TARGET __attribute__((target("ssse3")))

// The 16 characters of four groups of three bytes a, b, c, each spread over a 32-bit lane as b, a, c, b
// (in memory order), so that as two little-endian 16-bit halves the lane holds [a:b] and [b:c] — each
// half's 6-bit values whole inside it.
TILECAST_BASE64_TARGET
static inline __m128i encode_spread(__m128i spread) {
    // The first and third values (a's top six bits; b's last four with c's top two) shifted down to
    // bytes 0 and 2 of the lane by a high multiplication, the second and fourth (a's last two with b's
    // top four; c's last six) shifted up to bytes 1 and 3 by a low one.
    const __m128i first_and_third = _mm_mulhi_epu16(_mm_and_si128(spread, _mm_set1_epi32(0x0fc0fc00)),
                                                    _mm_set1_epi32(0x04000040));
    const __m128i second_and_fourth = _mm_mullo_epi16(_mm_and_si128(spread, _mm_set1_epi32(0x003f03f0)),
                                                      _mm_set1_epi32(0x01000010));
    const __m128i values = _mm_or_si128(first_and_third, second_and_fourth);
    // The alphabet's five runs: A–Z for 0–25, a–z for 26–51, 0–9 for 52–61, then '-' and '_'. Each value
    // picks its run's entry of a 16-entry table of offsets: 0 for 26–51, 1–12 for 52–63 (one entry each),
    // 13 for 0–25.
    __m128i run = _mm_subs_epu8(values, _mm_set1_epi8(51));
    const __m128i upper = _mm_cmpgt_epi8(_mm_set1_epi8(26), values);
    run = _mm_or_si128(run, _mm_and_si128(upper, _mm_set1_epi8(13)));
    const __m128i offsets = _mm_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                          '0' - 52, '0' - 52, '0' - 52, '0' - 52, '-' - 62, '_' - 63, 'A', 0, 0);
    return _mm_add_epi8(values, _mm_shuffle_epi8(offsets, run));
}

TILECAST_BASE64_TARGET
void tilecast_base64url_encode32(const uint8_t bytes[32], uint8_t characters[43]) {
    // Bytes 0–11 and 12–23, four groups of three each.
    const __m128i spread_twelve = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    const __m128i first = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)bytes), spread_twelve);
    const __m128i second = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(bytes + 12)), spread_twelve);
    _mm_storeu_si128((__m128i *)characters, encode_spread(first));
    _mm_storeu_si128((__m128i *)(characters + 16), encode_spread(second));
    // Bytes 16–31 loaded, of which 24–29 make two groups, and 30, 31 and a zero (an index with its top
    // bit set shuffles in a zero) the third; the fourth lane is zeros and its characters are not stored.
    const __m128i spread_last = _mm_setr_epi8(9, 8, 10, 9, 12, 11, 13, 12, 15, 14, -128, 15, -128, -128, -128, -128);
    const __m128i last = encode_spread(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(bytes + 16)), spread_last));
    _mm_storel_epi64((__m128i *)(characters + 32), last);
    const uint32_t tail = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(last, 8));
    characters[40] = (uint8_t)tail;
    characters[41] = (uint8_t)(tail >> 8);
    characters[42] = (uint8_t)(tail >> 16);
}

#else

int tilecast_base64url_vector_available(void) { return 0; }

void tilecast_base64url_encode32(const uint8_t bytes[32], uint8_t characters[43]) {
    (void)bytes;
    (void)characters;
    __builtin_trap();
}

#endif
