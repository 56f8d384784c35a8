/* LEAKY_RELU (int8, int16), bit-exact with TFLM's QuantizeLeakyRelu: (input - zero point) is
 * rescaled by input_scale / output_scale when non-negative (the identity multiplier) and by
 * alpha * input_scale / output_scale when negative (the alpha multiplier), offset by the output
 * zero point and clamped to the type's range. */
#ifndef MICROBUILD_KERNELS_LEAKY_RELU_H
#define MICROBUILD_KERNELS_LEAKY_RELU_H

#include <stdint.h>

typedef struct {
    int32_t input_zero_point;
    int32_t output_zero_point;
    int32_t multiplier_identity;
    int32_t shift_identity;    /* > 0 shifts left */
    int32_t multiplier_alpha;
    int32_t shift_alpha;       /* > 0 shifts left */
} mb_leaky_relu_params;

void mb_leaky_relu_s8(const mb_leaky_relu_params *params, const int8_t *input, int8_t *output,
                      int32_t size);
void mb_leaky_relu_s16(const mb_leaky_relu_params *params, const int16_t *input, int16_t *output,
                       int32_t size);

#endif
