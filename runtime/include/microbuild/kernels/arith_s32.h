/* Element-wise int32 arithmetic with TFLite broadcasting (ADD, SUB, MUL, DIV, MINIMUM, MAXIMUM on
 * non-quantized int32 tensors), bit-exact with TFLM's reference kernels for int32: the result of
 * the operation is clamped to [activation_min, activation_max] (the fused activation's range;
 * INT32_MIN..INT32_MAX for none). Sums and products wrap modulo 2^32 (TFLM's int32 arithmetic
 * overflows there; two's-complement targets wrap), DIV truncates toward zero like C's `/`.
 * DIV by zero traps in TFLM; here it gives 0, and INT32_MIN / -1 gives INT32_MIN. */
#ifndef MICROBUILD_KERNELS_ARITH_S32_H
#define MICROBUILD_KERNELS_ARITH_S32_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"

#define MB_S32_ADD 0
#define MB_S32_SUB 1
#define MB_S32_MUL 2
#define MB_S32_DIV 3
#define MB_S32_MIN 4
#define MB_S32_MAX 5

typedef struct {
    int32_t operation; /* MB_S32_* */
    int32_t activation_min;
    int32_t activation_max;
} mb_arith_s32_params;

void mb_arith_s32(const mb_arith_s32_params *params, const mb_broadcast_shape *shape,
                  const int32_t *a, const int32_t *b, int32_t *output);

#endif
