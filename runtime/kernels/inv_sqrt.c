#include "microbuild/kernels/inv_sqrt.h"

#include "microbuild/quant.h"

/* gemmlowp's SaturatingRoundingMultiplyByPOT for a positive exponent: x * 2^exponent,
 * saturated to int32. */
static int32_t saturating_shift_left(int32_t x, int exponent)
{
    const int32_t threshold = (int32_t)(((int32_t)1 << (31 - exponent)) - 1);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << exponent);
}

/* mb_saturating_rounding_doubling_high_mul with the rounding as one 64-bit add and arithmetic
 * shift: for a * b < 0, the reference's nudge 1 - 2^30 and division truncating toward zero give
 * floor((a * b + 2^30) / 2^31) as for a * b >= 0 (quant_fast.h), without the sign test and the
 * division's correction (the Newton loop below is 20 of these per row). */
static inline int32_t srdhm(int32_t a, int32_t b)
{
    if (a == b && a == INT32_MIN) {
        return INT32_MAX;
    }
    return (int32_t)(((int64_t)a * b + ((int64_t)1 << 30)) >> 31);
}

void mb_inv_sqrt_multiplier(int32_t input, int32_t *multiplier, int *shift)
{
    if (input <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    int right_shift = 11;
    while (input >= ((int32_t)1 << 29)) {
        input /= 4;
        right_shift++;
    }
    /* Normalize the input into [2^27, 2^29) by an even left shift. */
    const int pairs = (mb_count_leading_zeros((uint32_t)input) - 1) / 2 - 1;
    right_shift -= pairs;
    input = (int32_t)((uint32_t)input << (2 * pairs));

    /* Newton-Raphson for 1 / sqrt(input / 2) in Q3.28, from x = 1. */
    const int32_t half_input = mb_rounding_divide_by_pot(input >> 1, 1);
    const int32_t half_three = ((int32_t)1 << 28) + ((int32_t)1 << 27);
    int32_t x = (int32_t)1 << 28;
    for (int i = 0; i < 5; i++) {
        const int32_t x2 = srdhm(x, x);
        const int32_t x3 = saturating_shift_left(srdhm(x2, x),
                                                 6);
        const int32_t a = srdhm(half_three, x);
        const int32_t b = srdhm(half_input, x3);
        x = saturating_shift_left((int32_t)((uint32_t)a - (uint32_t)b), 3);
    }
    x = srdhm(x, 1518500250); /* sqrt(2) / 2 in Q0.31 */
    if (right_shift < 0) {
        x = (int32_t)((uint32_t)x << -right_shift);
        right_shift = 0;
    }
    *multiplier = x;
    *shift = -right_shift;
}
