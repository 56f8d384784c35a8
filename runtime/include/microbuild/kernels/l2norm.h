/* Int8 L2_NORMALIZATION along the last axis, bit-exact with TFLM's
 * reference_integer_ops::L2Normalization: per row, the int32 sum of squared (x - zero point)
 * gives 1 / sqrt(sum) as a multiplier and shift (mb_inv_sqrt_multiplier), applied to each
 * (x - zero point) with 7 more bits of left shift; outputs in 1/128 steps, saturated to int8. */
#ifndef MICROBUILD_KERNELS_L2NORM_H
#define MICROBUILD_KERNELS_L2NORM_H

#include <stdint.h>

typedef struct {
    int32_t rows;
    int32_t depth;
    int32_t input_zero_point;
} mb_l2norm_s8_params;

/* output may be input (in place): a row is read whole before it is written. */
void mb_l2norm_s8(const mb_l2norm_s8_params *params, const int8_t *input, int8_t *output);

#endif
