// SPDX-License-Identifier: Apache-2.0
//
// Base64url without padding (RFC 4648 §5) of a 32-byte secret on the processor's vector instructions,
// where it has them: SSSE3's byte shuffle (PSHUFB) on x86-64. TilecastAuth's portable Swift encoder
// is used everywhere else, and is what this one is tested against.

#ifndef CTILECAST_BASE64_H
#define CTILECAST_BASE64_H

#include <stdint.h>

/// 1 when this processor runs `tilecast_base64url_encode32`, 0 otherwise. Asks the processor (CPUID)
/// every time it is called; the caller keeps the answer.
int tilecast_base64url_vector_available(void);

/// Writes the 43 characters of the unpadded base64url of the 32 bytes at `bytes` to `characters`.
/// Only to be called when `tilecast_base64url_vector_available()` returned 1.
void tilecast_base64url_encode32(const uint8_t bytes[32], uint8_t characters[43]);

#endif
