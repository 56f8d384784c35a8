/* Float32 ARG_MAX / ARG_MIN along one axis, int32 indices, bit-exact with TFLM's ArgMinMax on
 * float, over the [outer][size][inner] view of the input fixed at compile time (reduce.h). */
#ifndef MICROBUILD_KERNELS_ARG_F32_H
#define MICROBUILD_KERNELS_ARG_F32_H

#include <stdint.h>

#include "microbuild/kernels/reduce.h"

void mb_arg_max_f32(const mb_arg_walk_params *params, const float *input, int32_t *output);
void mb_arg_min_f32(const mb_arg_walk_params *params, const float *input, int32_t *output);

#endif
