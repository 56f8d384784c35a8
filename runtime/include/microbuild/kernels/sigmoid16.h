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

#endif
