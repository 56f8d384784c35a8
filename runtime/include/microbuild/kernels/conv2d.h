/* Int8 CONV_2D (NHWC input, OHWI filter), bit-exact with TFLM's
 * reference_integer_ops::ConvPerChannel.
 *
 * Each output is sum(filter * (input - input_zero_point)) + bias in int32, scaled by its channel's
 * Q31 multiplier and shift (TFLM's double rounding), offset by the output zero point and clamped
 * to the fused activation's range. Per-tensor filters use the same per-channel arrays with every
 * entry equal, as TFLM does. Taps that fall in the padding are skipped, which is the same as
 * reading the input zero point there.
 *
 * Grouped convolution: the filter's input depth (filter_c) divides the input depth; output
 * channel o belongs to group g = o / (output_c / groups) and reads input channels
 * [g * filter_c, (g + 1) * filter_c). */
#ifndef MICROBUILD_KERNELS_CONV2D_H
#define MICROBUILD_KERNELS_CONV2D_H

#include <stdint.h>

typedef struct {
    int32_t batches;
    int32_t input_h, input_w, input_c;
    int32_t filter_h, filter_w, filter_c; /* filter_c: input channels per group */
    int32_t output_h, output_w, output_c;
    int32_t stride_h, stride_w;
    int32_t dilation_h, dilation_w;
    int32_t pad_top, pad_left;            /* SAME padding before the first row / column */
    int32_t input_offset;                 /* minus the input zero point */
    int32_t output_offset;                /* the output zero point */
    int32_t activation_min, activation_max;
} mb_conv2d_s8_params;

/* bias may be NULL (no bias input). multipliers / shifts have output_c entries; shift > 0 is a
 * left shift. */
void mb_conv2d_s8(const mb_conv2d_s8_params *params, const int8_t *input, const int8_t *filter,
                  const int32_t *bias, const int32_t *multipliers, const int32_t *shifts,
                  int8_t *output);

#endif
