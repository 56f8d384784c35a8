/* A short forward copy shared by the data-movement kernels (concatenation, pad, transpose, table
 * gather, gather), whose runs are a few bytes to a few dozen: too short for a library memcpy's
 * set-up to pay off. */
#ifndef MICROBUILD_KERNELS_COPY_BYTES_H
#define MICROBUILD_KERNELS_COPY_BYTES_H

#include <stdint.h>
#include <string.h>

/* Copies `bytes` bytes forward: whole 32-bit words first, each read into a local before it is
 * written (so no memcpy sees an overlap when the output lies below an overlapping input;
 * compilers make each one LDR/STR, unaligned where the core allows it: Cortex-M3 and up, byte
 * moves where it does not), then the remaining bytes. */
static inline void mb_copy_bytes_forward(void *output, const void *input, int32_t bytes)
{
    uint8_t *out = (uint8_t *)output;
    const uint8_t *in = (const uint8_t *)input;
    int32_t j = 0;
    for (; j + 4 <= bytes; j += 4) {
        uint32_t word;
        memcpy(&word, in + j, 4);
        memcpy(out + j, &word, 4);
    }
    for (; j < bytes; j++) {
        out[j] = in[j];
    }
}

#endif
