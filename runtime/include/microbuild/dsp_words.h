/* Word loads and SXTB16 splits shared by the DSP kernels (fully_connected_dsp.c, lstm_dsp.c,
 * svdf_fast.c): one 32-bit load brings 4 int8 values; SXTB16 sign-extends bytes 0 and 2 into
 * two int16 halves ("even"), SXTB16 with ROR #8 bytes 1 and 3 ("odd"), the operands of SMLAD. */
#ifndef MICROBUILD_DSP_WORDS_H
#define MICROBUILD_DSP_WORDS_H

#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t mb_load32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

static inline int32_t mb_even16(uint32_t v)
{
    return (int32_t)__sxtb16((int32_t)v);
}

/* SXTB16 with its own ROR #8 (GCC would not fold a separate rotate). */
static inline int32_t mb_odd16(uint32_t v)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

/* SMMULR: (a x b + 2^31) >> 32, the rounded high word of the product (GCC does not recognise
 * the C form; ACLE has no intrinsic). */
static inline int32_t mb_smmulr(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* mb_requantize_fast32(x, m, -right) (quant_fast.h) for a right shift >= 1 and x small enough
 * that x << lshift fits in int32, lshift being the rescaling's left shift + 1 (the caller bounds
 * x, e.g. the compiler from the weights): the doubling high multiply ((x << left) x m + 2^30)
 * >> 31 is then SMMULR of x << lshift with m, at most 2^30 in magnitude, so its rounding shift
 * adds half = 2^(right - 1), minus one below zero, without overflow: 5 instructions instead of
 * about 12. With no right shift, mb_smmulr(x << lshift, m) alone is the result. */
static inline int32_t mb_rescale_small(int32_t x, int32_t lshift, int32_t m, int32_t half,
                                       int32_t right)
{
    const int32_t high = mb_smmulr(x << lshift, m);
    return (high + half + (high >> 31)) >> right;
}

#endif
#endif
