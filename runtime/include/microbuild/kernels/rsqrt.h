/* Int16 RSQRT (16x8 models, zero points 0), bit-exact with TFLM's RsqrtEvalQuantized:
 * 1 / sqrt(x) as a multiplier (mb_inv_sqrt_multiplier) applied to 2^20, rescaled by
 * 1 / (sqrt(input_scale) * output_scale) with 20 bits less shift, saturated. x = 0 gives
 * INT16_MAX; so does x < 0, for which TFLM stops with an error instead.
 * (int8 RSQRT is a table: microbuild/kernels/lut.h.) */
#ifndef MICROBUILD_KERNELS_RSQRT_H
#define MICROBUILD_KERNELS_RSQRT_H

#include <stdint.h>

typedef struct {
    int32_t multiplier;  /* Q31 1 / (sqrt(input_scale) * output_scale) */
    int32_t shift;       /* its shift minus 20; > 0 shifts left */
} mb_rsqrt_s16_params;

/* output may be input (in place). */
void mb_rsqrt_s16(const mb_rsqrt_s16_params *params, const int16_t *input, int16_t *output,
                  int32_t size);

#endif
