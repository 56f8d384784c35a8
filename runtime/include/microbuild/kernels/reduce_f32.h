/* Float32 MEAN, SUM, REDUCE_MAX and REDUCE_MIN over any set of axes, bit-exact with TFLM's float
 * reductions (reference_ops::ReduceGeneric and Mean): every output starts from the reducer's
 * initial value (0 for SUM and MEAN, -FLT_MAX for REDUCE_MAX, FLT_MAX for REDUCE_MIN) and takes
 * in its inputs in the input's row-major order, the order in which TFLM's ReduceImpl walks them;
 * MEAN then divides the sum by the float count. The axes are described as in reduce.h (kept and
 * reduced dimensions with their input strides), and walked with mb_reduce_step. */
#ifndef MICROBUILD_KERNELS_REDUCE_F32_H
#define MICROBUILD_KERNELS_REDUCE_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"
#include "microbuild/kernels/reduce.h"

#define MB_F32_REDUCE_SUM 0
#define MB_F32_REDUCE_MEAN 1
#define MB_F32_REDUCE_MAX 2
#define MB_F32_REDUCE_MIN 3

void mb_reduce_f32(const mb_reduce_params *params, int32_t operation, const float *input,
                   float *output);

#endif
