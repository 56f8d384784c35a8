/* Float32 BATCH_MATMUL, bit-exact with TFLM's reference BatchMatMul<float>: each output is
 * `total = 0; total += lhs(i, k) * rhs(k, j)` for k = 0 .. depth - 1, in that order, the `+=`
 * an MB_F32_MULADD as GCC fused TFLM's (f32.h); no activation. The layout (batch broadcasting,
 * adj_x / adj_y strides, a constant rhs stored transposed) is the integer kernel's
 * mb_batch_matmul_params, whose quantization fields this kernel does not read. */
#ifndef MICROBUILD_KERNELS_BATCH_MATMUL_F32_H
#define MICROBUILD_KERNELS_BATCH_MATMUL_F32_H

#include "microbuild/kernels/batch_matmul.h"
#include "microbuild/kernels/f32.h"

void mb_batch_matmul_f32(const mb_batch_matmul_params *params, const float *lhs,
                         const float *rhs, float *output);

#endif
