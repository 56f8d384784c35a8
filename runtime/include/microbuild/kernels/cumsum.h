/* CUMSUM, bit-exact with TFLM's: running sums along one axis of an int8 or float32 tensor, seen as
 * [outer][depth][inner] (depth the summed axis), optionally exclusive (each output is the sum
 * before its element) and reversed (summed from the end).
 *
 * int8 follows TFLM's reference_ops::CumSum: every value (offset by minus the input zero point) is
 * shifted left by 20 and halved by a Q31 multiplier, the sums are rescaled by the output
 * multiplier. Like TFLM, a line's sum starts not at 0 but at the rescaled input offset, and it
 * adds in int32 (wrapping where TFLM's would). float32 adds in the order of the walk, as TFLM. */
#ifndef MICROBUILD_KERNELS_CUMSUM_H
#define MICROBUILD_KERNELS_CUMSUM_H

#include <stdint.h>

typedef struct {
    int32_t outer;     /* elements before the axis (product of the leading dimensions) */
    int32_t depth;     /* the summed axis */
    int32_t inner;     /* elements after the axis */
    int32_t exclusive; /* 1: output[k] is the sum of the elements before k */
    int32_t reverse;   /* 1: sum from the last element of the axis */
} mb_cumsum_shape;

typedef struct {
    int32_t input_offset; /* minus the input zero point */
    int32_t left_shift;   /* 20 */
    int32_t input_multiplier;
    int32_t input_shift;  /* <= 0 */
    int32_t output_multiplier;
    int32_t output_shift; /* <= 0 */
    int32_t output_offset;
    int32_t activation_min;
    int32_t activation_max;
} mb_cumsum_s8_params;

void mb_cumsum_s8(const mb_cumsum_shape *shape, const mb_cumsum_s8_params *params,
                  const int8_t *input, int8_t *output);
void mb_cumsum_f32(const mb_cumsum_shape *shape, const float *input, float *output);

#endif
