/* Fixed-point helpers shared by the int8 kernels.
 *
 * These reproduce TFLite Micro's integer arithmetic bit for bit (gemmlowp's "double rounding":
 * round the 64-bit product to Q31, then round the power-of-two division), because TFLM is the
 * reference microbuild must match. Multipliers and shifts are computed at compile time by
 * microbuild/compiler/quant.py; the device only applies them.
 */
#ifndef MICROBUILD_QUANT_H
#define MICROBUILD_QUANT_H

#include <stdint.h>

/* The leading zero bits of x (32 for 0): gemmlowp's CountLeadingZeros, the headroom the
 * softmax and inverse-square-root kernels normalize by. A loop rather than __builtin_clz,
 * which every compiler microbuild targets does not have. */
static inline int mb_count_leading_zeros(uint32_t x)
{
    int n = 0;
    if (x == 0) {
        return 32;
    }
    while ((x & 0x80000000u) == 0) {
        x <<= 1;
        n++;
    }
    return n;
}

static inline int32_t mb_saturating_rounding_doubling_high_mul(int32_t a, int32_t b)
{
    if (a == b && a == INT32_MIN) {
        return INT32_MAX;
    }
    int64_t ab = (int64_t)a * (int64_t)b;
    /* (int32_t)1, not 1: `int` is 16 bits on AVR, too narrow for bit 30. */
    const int32_t nudge = ab >= 0 ? ((int32_t)1 << 30) : (1 - ((int32_t)1 << 30));
    return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

static inline int32_t mb_rounding_divide_by_pot(int32_t x, int exponent)
{
    const int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* x * multiplier * 2^shift, multiplier in Q31; shift > 0 shifts left. */
static inline int32_t mb_mul_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift)
{
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    const int32_t shifted = (int32_t)((uint32_t)x << left);
    return mb_rounding_divide_by_pot(mb_saturating_rounding_doubling_high_mul(shifted, multiplier), right);
}

/* TFLM's MultiplyByQuantizedMultiplier for an int64 accumulator (the 16x8 kernels' int64 sums):
 * the multiplier is first reduced to 16 bits (rounded), then one rounding shift by 15 - shift.
 * The result is truncated to int32 as TFLM's is. */
static inline int32_t mb_mul_by_quantized_multiplier_s64(int64_t x, int32_t multiplier, int shift)
{
    const int32_t reduced = multiplier < 0x7FFF0000 ? ((multiplier + ((int32_t)1 << 15)) >> 16)
                                                    : 0x7FFF;
    const int total_shift = 15 - shift;
    const int64_t product = x * (int64_t)reduced + ((int64_t)1 << (total_shift - 1));
    return (int32_t)(product >> total_shift);
}

static inline int32_t mb_clamp_i32(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

#endif
