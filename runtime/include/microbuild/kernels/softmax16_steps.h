/* The steps of the int16 SOFTMAX variants (softmax16_fast.c, softmax16_dsp.c): TFLM's
 * SoftmaxInt16 (softmax.c's mb_softmax_s16) with the per-value arithmetic reorganised, same bits.
 *
 * - The rescaling of a difference diff <= 0, RoundingDivideByPOT(SRDHM(diff << left, m), right),
 *   is one rounded high word and one shift: SRDHM(a, m) = (2a x m + 2^31) >> 32 (2a fits since
 *   |diff| < 2^16 and left <= 14, the compiler checks), the high word of the product plus bit 31
 *   of its low word. It is <= 0 here, and for a value h <= 0 the rounding right shift (half away
 *   from zero) is (h + 2^(right-1) - 1) >> right. The exp table's bias 65535 (the reference's
 *   + 32767, then + 32768 to index from 0) is added before that shift as 65535 << right.
 * - The reference's clamp to int16 is then one clamp of the index at 0 (the value is <= 65535).
 * - The normalisation multiplies in 32 bits: exp values are in [0, 32767] and the reciprocal in
 *   (0, 32767], so the product and its rounding term fit.
 * - The leading zeros of the sum come from the compiler's builtin where it has one. */
#ifndef MICROBUILD_KERNELS_SOFTMAX16_STEPS_H
#define MICROBUILD_KERNELS_SOFTMAX16_STEPS_H

#include "microbuild/kernels/softmax.h"
#include "microbuild/quant.h"

/* The per-call constants of the exp step. */
typedef struct {
    int32_t lshift;     /* input_shift's left part + 1 */
    int32_t right;      /* input_shift's right part */
    int32_t multiplier;
    int32_t bias;       /* 2^(right-1) - 1 (0 without a right shift) + (65535 << right) */
} mb_s16_exp_step;

static inline mb_s16_exp_step mb_s16_exp_step_of(const mb_softmax_s16_params *p)
{
    mb_s16_exp_step s;
    s.lshift = (p->input_shift > 0 ? p->input_shift : 0) + 1;
    s.right = p->input_shift > 0 ? 0 : -p->input_shift;
    s.multiplier = p->input_multiplier;
    s.bias = (s.right > 0 ? ((int32_t)1 << (s.right - 1)) - 1 : 0) +
             (int32_t)((uint32_t)65535 << s.right);
    return s;
}

/* TFLM's interpolated lookup at index biased in [0, 65535] (lut_lookup_s16 of biased - 32768). */
static inline int32_t mb_s16_lookup(int32_t biased, const int16_t *table)
{
    const int16_t *entry = table + (biased >> 7);
    const int32_t base = entry[0];
    return base + (((entry[1] - base) * (biased & 0x7f) + 64) >> 7);
}

/* exp(diff) in Q0.15 for diff = x - max <= 0. */
static inline int32_t mb_s16_exp(int32_t diff, int32_t lshift, int32_t multiplier, int32_t bias,
                                 int32_t right)
{
    const int64_t product = (int64_t)(int32_t)((uint32_t)diff << lshift) * multiplier;
    const int32_t high = (int32_t)(product >> 32) + (int32_t)((uint32_t)product >> 31);
    const int32_t biased = (high + bias) >> right;
    return mb_s16_lookup(biased < 0 ? 0 : biased, mb_softmax16_exp_table);
}

static inline int mb_s16_leading_zeros(uint32_t x)
{
#if defined(__GNUC__)
    return x == 0 ? 32 : __builtin_clz(x);
#else
    return mb_count_leading_zeros(x);
#endif
}

/* 1 / sum as the reference computes it: the reciprocal (Q0.15) and the right shift that goes
 * with it. */
static inline int32_t mb_s16_reciprocal(int32_t sum, int *right_shift)
{
    const int headroom_plus_one = mb_s16_leading_zeros((uint32_t)sum);
    const int32_t shifted = (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) +
                                       ((int64_t)1 << 13)) >> 14);
    int32_t x = shifted - (((int32_t)1 << 15) + ((int32_t)1 << 16));
    x = x < -32768 ? -32768 : (x > 32767 ? 32767 : x);
    *right_shift = 31 - headroom_plus_one;
    return mb_s16_lookup(x + 32768, mb_softmax16_reciprocal_table);
}

#endif
