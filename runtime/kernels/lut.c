#include "microbuild/kernels/lut.h"

#include <string.h>

/* Four values per 32-bit word where the core loads words at any address (every host, Cortex-M3
 * and up): one load, one XOR that turns each signed byte v into its table index v + 128 (flipping
 * bit 7 adds 128 modulo 256), four byte lookups merged back into one word, one store. Each byte
 * lane goes back to the position it came from, so the byte order of the core does not matter. On
 * a core without unaligned word access (ARMv6-M) memcpy would split into byte loads, so there the
 * byte loop does all of it. */
#if !defined(__arm__) || defined(__ARM_FEATURE_UNALIGNED)
#define MB_LUT_WORDS 1
#else
#define MB_LUT_WORDS 0
#endif

void mb_lut_s8(const int8_t table[256], const int8_t *input, int8_t *output, int32_t size)
{
    const uint8_t *entries = (const uint8_t *)table;
    int32_t i = 0;
#if MB_LUT_WORDS
    /* In place is safe: the whole word is read before any of its bytes is written. */
    for (; i + 4 <= size; i += 4) {
        uint32_t word;
        memcpy(&word, input + i, 4);
        word ^= 0x80808080u;
        const uint32_t result = (uint32_t)entries[word & 0xffu] |
                                ((uint32_t)entries[(word >> 8) & 0xffu] << 8) |
                                ((uint32_t)entries[(word >> 16) & 0xffu] << 16) |
                                ((uint32_t)entries[word >> 24] << 24);
        memcpy(output + i, &result, 4);
    }
#endif
    for (; i < size; i++) {
        output[i] = (int8_t)entries[(uint8_t)input[i] ^ 0x80u];
    }
}

void mb_flip_sign_bits_s8(const int8_t *input, int8_t *output, int32_t size)
{
    int32_t i = 0;
#if MB_LUT_WORDS
    for (; i + 4 <= size; i += 4) {
        uint32_t word;
        memcpy(&word, input + i, 4);
        word ^= 0x80808080u;
        memcpy(output + i, &word, 4);
    }
#endif
    for (; i < size; i++) {
        output[i] = (int8_t)((uint8_t)input[i] ^ 0x80u);
    }
}
