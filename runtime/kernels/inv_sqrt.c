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
        const int32_t x2 = mb_saturating_rounding_doubling_high_mul(x, x);
        const int32_t x3 = saturating_shift_left(mb_saturating_rounding_doubling_high_mul(x2, x),
                                                 6);
        const int32_t a = mb_saturating_rounding_doubling_high_mul(half_three, x);
        const int32_t b = mb_saturating_rounding_doubling_high_mul(half_input, x3);
        x = saturating_shift_left((int32_t)((uint32_t)a - (uint32_t)b), 3);
    }
    x = mb_saturating_rounding_doubling_high_mul(x, 1518500250); /* sqrt(2) / 2 in Q0.31 */
    if (right_shift < 0) {
        x = (int32_t)((uint32_t)x << -right_shift);
        right_shift = 0;
    }
    *multiplier = x;
    *shift = -right_shift;
}
