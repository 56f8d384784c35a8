/* Element-wise float32 arithmetic with TFLite broadcasting (ADD, SUB, MUL, DIV, MINIMUM, MAXIMUM,
 * SQUARED_DIFFERENCE), bit-exact with TFLM's float reference kernels: one float operation per
 * element (a + b, a - b, a * b, a / b; std::min / std::max; (a - b) * (a - b)), then
 * ActivationFunctionWithMinMax to the fused activation's range (-FLT_MAX..FLT_MAX without one;
 * MINIMUM, MAXIMUM and SQUARED_DIFFERENCE have none and are not clamped). PRELU is one more
 * such operation, b being alpha: a >= 0 ? a : a * alpha (BroadcastPrelu4DSlowFloat), unclamped. */
#ifndef MICROBUILD_KERNELS_ARITH_F32_H
#define MICROBUILD_KERNELS_ARITH_F32_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"
#include "microbuild/kernels/f32.h"

#define MB_F32_ADD 0
#define MB_F32_SUB 1
#define MB_F32_MUL 2
#define MB_F32_DIV 3
#define MB_F32_MIN 4
#define MB_F32_MAX 5
#define MB_F32_SQUARED_DIFFERENCE 6
#define MB_F32_PRELU 7
/* TFLM's FloorDiv<float>: floor of the quotient computed in double; FloorMod<float>: fmodf,
 * moved to the divisor's sign. Neither clamps. */
#define MB_F32_FLOOR_DIV 8
#define MB_F32_FLOOR_MOD 9

typedef struct {
    int32_t operation; /* MB_F32_* */
    int32_t clamped;   /* 1: clamp to [activation_min, activation_max] */
    float activation_min;
    float activation_max;
} mb_arith_f32_params;

void mb_arith_f32(const mb_arith_f32_params *params, const mb_broadcast_shape *shape,
                  const float *a, const float *b, float *output);

/* ADD_N (reference_ops::AddN): per element the sum from 0 of the inputs in order. */
void mb_add_n_f32(const float *const *inputs, int32_t count, float *output, int32_t size);

#endif
