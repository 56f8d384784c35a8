/* TFLite's GetInvSqrtQuantizedMultiplierExp (reverse shift -1): 1 / sqrt(input) for an int32
 * input >= 0 as a Q31 multiplier and a shift (> 0 shifts left) for
 * mb_mul_by_quantized_multiplier, by gemmlowp's fixed-point Newton-Raphson iteration; inputs 0
 * and 1 give INT32_MAX, shift 0. Used by the int8 L2_NORMALIZATION and int16 RSQRT kernels
 * (int8 RSQRT is a table computed by the compiler with the same arithmetic,
 * microbuild/compiler/ops/rsqrt.py). */
#ifndef MICROBUILD_KERNELS_INV_SQRT_H
#define MICROBUILD_KERNELS_INV_SQRT_H

#include <stdint.h>

void mb_inv_sqrt_multiplier(int32_t input, int32_t *multiplier, int *shift);

#endif
