/* Float32 L2_NORMALIZATION along the last axis, bit-exact with TFLM's
 * reference_ops::L2Normalization: per row the sum from 0 of x * x in order (fused where TFLM's
 * build fuses, see f32.h), its sqrtf, at least epsilon (1e-6, TFLM's default), then each x
 * divided by it. */
#ifndef MICROBUILD_KERNELS_L2NORM_F32_H
#define MICROBUILD_KERNELS_L2NORM_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

void mb_l2_normalization_f32(const float *input, float *output, int32_t rows, int32_t depth);

#endif
