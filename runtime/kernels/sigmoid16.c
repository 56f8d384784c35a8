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
        const int32_t x = rescale(input[i], multiplier, shift);
        const uint32_t magnitude = (uint32_t)(x < 0 ? -x : x);
        const uint32_t entry = magnitude >> 9;
        uint32_t result;
        if (entry >= 255) {
            result = (uint32_t)0x7FFF << 10;
        } else {
            const uint32_t a = mb_sigmoid_table_u16[entry];
            const uint32_t b = mb_sigmoid_table_u16[entry + 1];
            /* Linear interpolation on the 9 fraction bits; b >= a, the table rises. */
            result = (a << 9) + (magnitude & 0x1FF) * (b - a);
        }
        /* sigmoid(-x) = 1 - sigmoid(x), in unsigned arithmetic as TFLM does it. */
        result = x >= 0 ? result + ((uint32_t)1 << 9)
                        : ((uint32_t)1 << (16 + 9)) - result + ((uint32_t)1 << 9) - 1;
        output[i] = (int16_t)(result >> 10);
    }
}

void mb_tanh_s16(int32_t multiplier, int32_t shift, const int16_t *input, int16_t *output,
                 int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        const int32_t x = rescale(input[i], multiplier, shift);
        const uint32_t magnitude = (uint32_t)(x < 0 ? -x : x);
        const uint32_t entry = magnitude >> 8;
        int32_t result;
        if (entry >= 255) {
            result = (int32_t)0xFFFF << 8;
        } else {
            const uint32_t a = mb_sigmoid_table_u16[entry];
            const uint32_t b = mb_sigmoid_table_u16[entry + 1];
            result = (int32_t)((a << 8) + (magnitude & 0xFF) * (b - a));
        }
        /* tanh = 2 sigmoid(2x) - 1, odd in x. */
        result = x >= 0 ? result - ((int32_t)1 << (14 + 9)) + ((int32_t)1 << (9 - 2))
                        : -result + ((int32_t)1 << (14 + 9)) + ((int32_t)1 << (9 - 2)) - 1;
        output[i] = (int16_t)(result >> (9 - 1));
    }
}
