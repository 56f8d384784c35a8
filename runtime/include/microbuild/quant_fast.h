/* The requantization step of the kernel variants: the same result as
 * mb_mul_by_quantized_multiplier() (quant.h) in fewer instructions, for the multipliers the
 * compiler emits.
 *
 * Why it is exact. gemmlowp's rounding doubling high multiply is trunc((a*b + nudge) / 2^31)
 * with nudge = 2^30 for a*b >= 0 and 1 - 2^30 below. For a*b < 0 that quotient is negative, and
 * truncating a negative number is floor((t + 2^31 - 1) / 2^31) = floor((a*b + 2^30) / 2^31): the
 * same expression as for a*b >= 0. So both cases are one 64-bit add and an arithmetic shift
 * (SMULL, ADDS, ADC and a shift on Cortex-M). The one saturating case, a == b == INT32_MIN,
 * cannot occur: compile-time multipliers are positive Q31 values (microbuild/compiler/quant.py).
 *
 * The rounding right shift (round half away from zero) adds half minus one for negative values
 * before an arithmetic shift, in 64 bits so x near INT32_MAX cannot overflow. */
#ifndef MICROBUILD_QUANT_FAST_H
#define MICROBUILD_QUANT_FAST_H

#include <stdint.h>

/* x * multiplier * 2^shift (shift > 0: left), multiplier > 0. */
static inline int32_t mb_requantize_fast(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int64_t product = (int64_t)(int32_t)((uint32_t)x << left) * multiplier;
    const int32_t high = (int32_t)((product + ((int64_t)1 << 30)) >> 31);
    if (right == 0) {
        return high;
    }
    const int64_t half = (int64_t)1 << (right - 1);
    return (int32_t)(((int64_t)high + half - (high < 0 ? 1 : 0)) >> right);
}

/* mb_requantize_fast's result with the rounding right shift as the reference's own
 * RoundingDivideByPOT (quant.h) in 32 bits: a mask, a threshold and a compare instead of a 64-bit
 * add and variable shift, fewer instructions where the shift is only known at run time (the LSTM
 * gates' and cell's scales). */
static inline int32_t mb_requantize_fast32(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int64_t product = (int64_t)(int32_t)((uint32_t)x << left) * multiplier;
    const int32_t high = (int32_t)((product + ((int64_t)1 << 30)) >> 31);
    const int32_t mask = (int32_t)(((uint32_t)1 << right) - 1u);
    const int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
    return (high >> right) + ((high & mask) > threshold ? 1 : 0);
}

#endif
