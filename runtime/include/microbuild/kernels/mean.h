/* Int8 MEAN over any set of axes, bit-exact with TFLM's reference_ops::QuantizedMeanOrSum.
 *
 * For every output element the raw int8 inputs along the reduced axes are summed in int32, the
 * input zero point times the element count is subtracted, and the result is rescaled with one Q31
 * multiplier and shift (TFLM's double rounding) that fold in both input_scale / output_scale and
 * 1 / count, then offset by the output zero point and saturated to int8. TFLM takes this path even
 * when input and output share scale and zero point.
 *
 * The input is described at compile time as two groups of dimensions with their input strides:
 * the kept ones (in order, which is also the output's order) and the reduced ones. */
#ifndef MICROBUILD_KERNELS_MEAN_H
#define MICROBUILD_KERNELS_MEAN_H

#include <stdint.h>

#define MB_MEAN_MAX_DIMS 5

typedef struct {
    int32_t kept_count;
    int32_t kept_dims[MB_MEAN_MAX_DIMS];
    int32_t kept_strides[MB_MEAN_MAX_DIMS];     /* in input elements */
    int32_t reduced_count;
    int32_t reduced_dims[MB_MEAN_MAX_DIMS];
    int32_t reduced_strides[MB_MEAN_MAX_DIMS];
    int32_t input_zero_point_sum;               /* input zero point * reduced element count */
    int32_t multiplier;
    int32_t shift;                              /* > 0 shifts left */
    int32_t output_offset;                      /* the output zero point */
} mb_mean_s8_params;

void mb_mean_s8(const mb_mean_s8_params *params, const int8_t *input, int8_t *output);
/* The same on int16 values (16x8 models), clamped to int16. */
void mb_mean_s16(const mb_mean_s8_params *params, const int16_t *input, int16_t *output);

#endif
