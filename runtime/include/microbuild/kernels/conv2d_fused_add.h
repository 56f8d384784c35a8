/* The scalar arithmetic of CONV_2D's fused residual ADD, shared by the kernel variants that
 * fuse it (conv2d_gemm.c, conv2d_mve.c): mb_add_s8_one (add.h) with each rescale as one
 * 32x32->64 multiply-add instead of mb_mul_by_quantized_multiplier's separate rounding steps.
 * Same results, fewer instructions. */
#ifndef MICROBUILD_KERNELS_CONV2D_FUSED_ADD_H
#define MICROBUILD_KERNELS_CONV2D_FUSED_ADD_H

#include <stdint.h>

#include "microbuild/kernels/add.h"
#include "microbuild/quant_fast.h"

/* mb_requantize_fast(x, m, -r) for r in [1, 31], given x2 = 2 * x (the compiler accepts only
 * convs whose |x| < 2^30). The Q31 rounding (+2^30, >> 31) and the rounding right shift by r
 * (+2^(r-1), minus 1 for a negative value, >> r) compose exactly into
 *     floor((x * m + 2^30 + 2^(30 + r) - [x < 0] * 2^31) / 2^(31 + r))
 *   = (floor((2^(r-1) * 2^32 + 2x * m + 2^31) / 2^32) - [x < 0]) >> r
 * (for x < 0 whose Q31 product rounds to 0, x's sign stands in for the rounded value's: both
 * give 0). With the DSP extension the floor is one SMMLAR with accumulator 2^(r-1). */
static inline int32_t mb_conv2d_requantize2(int32_t x2, int32_t m, int32_t half, int32_t r)
{
#if defined(__ARM_FEATURE_DSP)
    int32_t hi;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(hi) : "r"(x2), "r"(m), "r"(half));
#else
    const int32_t hi = (int32_t)(((int64_t)x2 * m + (int64_t)half * 4294967296 + 2147483648) >>
                                 32);
#endif
    return (hi + (x2 >> 31)) >> r;
}

/* x * m * 2^shift rounded as mb_requantize_fast, for |x| < 2^30. */
static inline int32_t mb_conv2d_rescale(int32_t x, int32_t m, int32_t shift)
{
    if (shift < 0 && shift >= -31) {
        const int32_t r = -shift;
        return mb_conv2d_requantize2(x * 2, m, (int32_t)1 << (r - 1), r);
    }
    return mb_requantize_fast(x, m, shift);
}

/* mb_add_s8_one (the fused residual ADD) with the rescales above: with left_shift <= 20 and
 * input shifts <= 0 (what the compiler emits for int8), every value rescaled stays below 2^29
 * in magnitude. Otherwise add.h's own function. */
static inline int32_t mb_conv2d_add_one(const mb_add_s8_params *p, int32_t a, int32_t b)
{
    if (p->left_shift > 20 || p->input1_shift > 0 || p->input2_shift > 0) {
        return mb_add_s8_one(p, a, b);
    }
    const int32_t x1 = (p->input1_offset + a) * ((int32_t)1 << p->left_shift);
    const int32_t x2 = (p->input2_offset + b) * ((int32_t)1 << p->left_shift);
    const int32_t s1 = mb_conv2d_rescale(x1, p->input1_multiplier, p->input1_shift);
    const int32_t s2 = mb_conv2d_rescale(x2, p->input2_multiplier, p->input2_shift);
    int32_t v = mb_conv2d_rescale(s1 + s2, p->output_multiplier, p->output_shift) +
                p->output_offset;
    v = v < p->activation_min ? p->activation_min : v;
    return v > p->activation_max ? p->activation_max : v;
}

#endif
