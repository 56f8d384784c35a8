/* FULLY_CONNECTED on float32, bit-exact with TFLM's reference_ops::FullyConnected (float): each
 * output is sum over d of input[d] * weights[row][d], accumulated from 0 in order of d (fused
 * where TFLM's build fuses, see f32.h), plus the bias (0 when there is none), clamped to the
 * fused activation's range. */
#ifndef MICROBUILD_KERNELS_FULLY_CONNECTED_F32_H
#define MICROBUILD_KERNELS_FULLY_CONNECTED_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

typedef struct {
    int32_t batches;      /* input rows */
    int32_t input_depth;  /* values per input row */
    int32_t output_depth; /* weight rows = outputs per input row */
    float activation_min;
    float activation_max;
} mb_fully_connected_f32_params;

/* weights: [output_depth][input_depth]; bias: output_depth values or NULL. */
void mb_fully_connected_f32(const mb_fully_connected_f32_params *params, const float *input,
                            const float *weights, const float *bias, float *output);

#endif
