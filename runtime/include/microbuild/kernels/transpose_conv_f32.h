/* Float32 TRANSPOSE_CONV, bit-exact with TFLM's reference_ops::TransposeConv on float: the output
 * is zeroed, then every input value is scattered through the filter (`out += in * filter`, in
 * the order input row, column, channel, filter row, column, output channel: so each output's
 * sum takes its terms in input order), then the bias is added and the result clamped to the
 * fused activation's range. The `+=` is one MB_F32_MULADD, as GCC fused TFLM's (f32.h). */
#ifndef MICROBUILD_KERNELS_TRANSPOSE_CONV_F32_H
#define MICROBUILD_KERNELS_TRANSPOSE_CONV_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

typedef struct {
    int32_t batches;
    int32_t input_h, input_w, input_c;
    int32_t filter_h, filter_w; /* filter is [output_c, filter_h, filter_w, input_c] */
    int32_t output_h, output_w, output_c;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    float activation_min, activation_max;
} mb_transpose_conv_f32_params;

/* bias may be NULL. */
void mb_transpose_conv_f32(const mb_transpose_conv_f32_params *params, const float *input,
                           const float *filter, const float *bias, float *output);

#endif
