/* Float32 element-wise unary operators, bit-exact with TFLM's float kernels: EXP (std::exp:
 * expf), LOG (logf), NEG (-x), ABS (fabsf), RSQRT (1 / sqrtf(x)). */
#ifndef MICROBUILD_KERNELS_UNARY_F32_H
#define MICROBUILD_KERNELS_UNARY_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

#define MB_F32_EXP 0
#define MB_F32_LOG 1
#define MB_F32_NEG 2
#define MB_F32_ABS 3
#define MB_F32_RSQRT 4

void mb_unary_f32(int32_t operation, const float *input, float *output, int32_t size);

#endif
