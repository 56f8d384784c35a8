/* Float32 element-wise unary operators, bit-exact with TFLM's float kernels: EXP (std::exp:
 * expf), LOG (logf), NEG (-x), ABS (fabsf), RSQRT (1 / sqrtf(x)), SQRT (sqrtf), SQUARE (x * x),
 * SIN (sinf), COS (cosf), FLOOR (floorf), CEIL (ceilf), ROUND (reference_ops::Round: halves to
 * even), ELU (reference_ops::Elu: expm1f(x) below 0) and HARD_SWISH (reference_ops::HardSwish:
 * x * min(6, max(0, x + 3)) / 6). */
#ifndef MICROBUILD_KERNELS_UNARY_F32_H
#define MICROBUILD_KERNELS_UNARY_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

#define MB_F32_EXP 0
#define MB_F32_LOG 1
#define MB_F32_NEG 2
#define MB_F32_ABS 3
#define MB_F32_RSQRT 4
#define MB_F32_SQRT 5
#define MB_F32_SQUARE 6
#define MB_F32_SIN 7
#define MB_F32_COS 8
#define MB_F32_FLOOR 9
#define MB_F32_CEIL 10
#define MB_F32_ROUND 11
#define MB_F32_ELU 12
#define MB_F32_HARD_SWISH 13

void mb_unary_f32(int32_t operation, const float *input, float *output, int32_t size);

#endif
