/* Float32 CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D and MAX_POOL_2D on NHWC tensors, bit-exact
 * with TFLM's float reference kernels (reference_ops::Conv, DepthwiseConv, AveragePool, MaxPool):
 *
 * - CONV_2D: per output (y, x, c) the sum from 0 over filter rows, filter columns, then input
 *   channels of the group, skipping taps outside the input, of input * filter (fused where
 *   TFLM's build fuses, see f32.h); + bias (0 without); clamped to the activation's range.
 * - DEPTHWISE_CONV_2D: the same with one input channel per output channel (c / multiplier).
 * - AVERAGE_POOL_2D: the window clipped to the input, summed in row-major order, divided by the
 *   number of taps summed, clamped. MAX_POOL_2D: the maximum from -FLT_MAX, clamped.
 * - L2_POOL_2D (reference_ops::L2Pool): the window clipped to the input, the sum from 0 of
 *   x * x in row-major order (fused where TFLM's build fuses), sqrtf(sum / taps), clamped. */
#ifndef MICROBUILD_KERNELS_SPATIAL_F32_H
#define MICROBUILD_KERNELS_SPATIAL_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

typedef struct {
    int32_t batches;
    int32_t input_h, input_w, input_c;
    int32_t filter_h, filter_w, filter_c; /* filter_c: input channels per group (conv) */
    int32_t output_h, output_w, output_c;
    int32_t stride_h, stride_w;
    int32_t dilation_h, dilation_w;
    int32_t pad_top, pad_left;
    int32_t depth_multiplier; /* depthwise only */
    float activation_min;
    float activation_max;
} mb_spatial_f32_params;

/* filter: [output_c][filter_h][filter_w][filter_c]; bias: output_c values or NULL. */
void mb_conv2d_f32(const mb_spatial_f32_params *p, const float *input, const float *filter,
                   const float *bias, float *output);
/* filter: [1][filter_h][filter_w][output_c]. */
void mb_depthwise_conv2d_f32(const mb_spatial_f32_params *p, const float *input,
                             const float *filter, const float *bias, float *output);
/* output_c == input_c; filter_h/filter_w are the window. */
void mb_average_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output);
void mb_l2_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output);
void mb_max_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output);

#endif
