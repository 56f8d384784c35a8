/* Int16 LOGISTIC and TANH (16x8 models), bit-exact with TFLM's reference_integer_ops::Logistic and
 * Tanh on int16: the input is rescaled to the table's fixed point (input * multiplier, rounded
 * shift right) and the sigmoid of its magnitude is interpolated linearly between two entries of
 * mb_sigmoid_table_u16 (sigmoid(i / 24) in 0.16 fixed point); tanh(x) = 2 sigmoid(2x) - 1 reads
 * the same table with one more bit of input. Input and output zero points are 0, the output scale
 * 2^-15. */
#ifndef MICROBUILD_KERNELS_SIGMOID16_H
#define MICROBUILD_KERNELS_SIGMOID16_H

#include <stdint.h>

extern const uint16_t mb_sigmoid_table_u16[256];

/* multiplier <= 32767 and shift >= 0, as TFLM's Prepare computes them (a power-of-two input
 * scale is multiplier 3 << shift, shift 0: the compiler passes it resolved). */
void mb_logistic_s16(int32_t multiplier, int32_t shift, const int16_t *input, int16_t *output,
                     int32_t size);
void mb_tanh_s16(int32_t multiplier, int32_t shift, const int16_t *input, int16_t *output,
                 int32_t size);

/* One value of each, x already in the table's fixed point (input x multiplier, rounded shift
 * right): inline, so a kernel that computes its input (the LSTM's gates) squashes it in the same
 * loop instead of a pass of its own. */
static inline int16_t mb_logistic_s16_of(int32_t x)
{
    const uint32_t magnitude = (uint32_t)(x < 0 ? -x : x);
    const uint32_t entry = magnitude >> 9; /* 2^9 steps per table entry */
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
    return (int16_t)(result >> 10);
}

static inline int16_t mb_tanh_s16_of(int32_t x)
{
    const uint32_t magnitude = (uint32_t)(x < 0 ? -x : x);
    const uint32_t entry = magnitude >> 8; /* 2^8 steps per table entry */
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
    return (int16_t)(result >> (9 - 1));
}

#endif
