#include "microbuild/kernels/sigmoid16.h"

/* The input in the table's fixed point: 2^9 (logistic) or 2^8 (tanh) steps per table entry. */
static int32_t rescale(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    return (x * multiplier + round) >> shift;
}

void mb_logistic_s16(int32_t multiplier, int32_t shift, const int16_t *input, int16_t *output,
                     int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = mb_logistic_s16_of(rescale(input[i], multiplier, shift));
    }
}

void mb_tanh_s16(int32_t multiplier, int32_t shift, const int16_t *input, int16_t *output,
                 int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = mb_tanh_s16_of(rescale(input[i], multiplier, shift));
    }
}
