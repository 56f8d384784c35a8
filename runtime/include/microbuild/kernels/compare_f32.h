/* EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL on float32 inputs with broadcasting,
 * bool output (one byte, 0 or 1), bit-exact with TFLM's ComparisonImpl<float>: the C comparison
 * of the two floats as they are (no rescaling; a NaN compares unequal to everything). */
#ifndef MICROBUILD_KERNELS_COMPARE_F32_H
#define MICROBUILD_KERNELS_COMPARE_F32_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"

#define MB_COMPARE_F32_EQUAL 0
#define MB_COMPARE_F32_NOT_EQUAL 1
#define MB_COMPARE_F32_LESS 2
#define MB_COMPARE_F32_LESS_EQUAL 3
#define MB_COMPARE_F32_GREATER 4
#define MB_COMPARE_F32_GREATER_EQUAL 5

/* comparison: MB_COMPARE_F32_*. */
void mb_compare_f32(int32_t comparison, const mb_broadcast_shape *shape, const float *input1,
                    const float *input2, uint8_t *output);

#endif
