/* Int8 clamp without requantization: TFLM's int8 RELU6 (Relu6Quantized) clamps in the input's
 * quantized domain, between the input's zero and its quantized 6.0. */
#ifndef MICROBUILD_KERNELS_CLAMP_H
#define MICROBUILD_KERNELS_CLAMP_H

#include <stdint.h>

/* output[i] = min(max(input[i], lo), hi); output may be input (in place). */
void mb_clamp_s8(int8_t lo, int8_t hi, const int8_t *input, int8_t *output, int32_t size);

#endif
