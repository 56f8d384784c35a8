/* A short forward copy and fill shared by the data-movement kernels (concatenation, pad,
 * transpose, table gather, gather) and the 16x8 convolutions' window columns, whose runs are a
 * few bytes to a few dozen: too short for a library memcpy's or memset's set-up to pay off. */
#ifndef MICROBUILD_KERNELS_COPY_BYTES_H
#define MICROBUILD_KERNELS_COPY_BYTES_H

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#endif

/* Copies `bytes` bytes forward: whole 32-bit words first, each read into a local before it is
 * written (so no memcpy sees an overlap when the output lies below an overlapping input;
 * compilers make each one LDR/STR, unaligned where the core allows it: Cortex-M3 and up), then
 * the remaining bytes; on cores without unaligned accesses one memmove. On Helium 16 bytes a
 * step, the last step tail-predicated (each step's load precedes its store, so the overlap
 * argument holds). */
static inline void mb_copy_bytes_forward(void *output, const void *input, int32_t bytes)
{
    uint8_t *out = (uint8_t *)output;
    const uint8_t *in = (const uint8_t *)input;
#if defined(__ARM_FEATURE_MVE)
    /* a tail-predicated low-overhead loop: 2 instructions a step (GCC's vctp8q loop was 12) */
    register int32_t left __asm__("lr") = bytes > 0 ? bytes : 0;
    uint8x16_t v;
    __asm__ volatile("wlstp.8 lr, lr, 2f\n"
                     "1:\n\t"
                     "vldrb.8 %q[v], [%[in]], #16\n\t"
                     "vstrb.8 %q[v], [%[out]], #16\n\t"
                     "letp    lr, 1b\n"
                     "2:"
                     : [in] "+r"(in), [out] "+r"(out), [v] "=&w"(v), "+r"(left)
                     :
                     : "memory");
#elif defined(__arm__) && !defined(__ARM_FEATURE_UNALIGNED)
    /* Armv6-M / v8-M Baseline (Cortex-M0, M0+, M23) have no unaligned word access: GCC made
     * each word's 4-byte memcpy a library call (two a word); one memmove is the cheaper form
     * there (and keeps the overlap rule). */
    if (bytes > 0) {
        memmove(out, in, (size_t)bytes);
    }
#else
    int32_t j = 0;
    for (; j + 4 <= bytes; j += 4) {
        uint32_t word;
        memcpy(&word, in + j, 4);
        memcpy(out + j, &word, 4);
    }
    for (; j < bytes; j++) {
        out[j] = in[j];
    }
#endif
}

/* n bytes of a repeating 4-byte pattern (one element's bytes repeated 4 / size times; every
 * fill starts at an element boundary, so the pattern is in phase): words, then 0-3 bytes; on
 * Helium 16 bytes a store in a tail-predicated low-overhead loop. */
static inline void mb_fill_bytes(void *output, int32_t n, const uint8_t pattern[4])
{
    uint8_t *out = (uint8_t *)output;
    uint32_t w;
    memcpy(&w, pattern, sizeof w);
#if defined(__ARM_FEATURE_MVE)
    const uint8x16_t v = vreinterpretq_u8_u32(vdupq_n_u32(w));
    register int32_t left __asm__("lr") = n > 0 ? n : 0;
    __asm__ volatile("wlstp.8 lr, lr, 2f\n"
                     "1:\n\t"
                     "vstrb.8 %q[v], [%[out]], #16\n\t"
                     "letp    lr, 1b\n"
                     "2:"
                     : [out] "+r"(out), "+r"(left)
                     : [v] "w"(v)
                     : "memory");
#elif defined(__arm__) && !defined(__ARM_FEATURE_UNALIGNED)
    (void)w; /* no unaligned word stores (Cortex-M0, M0+, M23): byte by byte */
    for (int32_t i = 0; i < n; i++) {
        out[i] = pattern[i & 3];
    }
#else
    for (; n >= 4; n -= 4, out += 4) {
        memcpy(out, &w, sizeof w);
    }
    /* Not a loop: the compiler would make a 0-3 byte loop a memcpy call. */
    if (n > 0) {
        out[0] = pattern[0];
    }
    if (n > 1) {
        out[1] = pattern[1];
    }
    if (n > 2) {
        out[2] = pattern[2];
    }
#endif
}

#endif
