/* Int16 ABS (16x8 models), bit-exact with TFLM's AbsEvalQuantized: |x| (zero points are 0),
 * rescaled by input_scale / output_scale only when the scales differ, saturated to int16.
 * (int8 ABS is a table: microbuild/kernels/lut.h.) */
#ifndef MICROBUILD_KERNELS_ABS_H
#define MICROBUILD_KERNELS_ABS_H

#include <stdint.h>

typedef struct {
    int32_t rescale;     /* 0: the scales are equal and |x| is only saturated */
    int32_t multiplier;  /* Q31 input_scale / output_scale */
    int32_t shift;       /* > 0 shifts left */
} mb_abs_s16_params;

/* output may be input (in place). */
void mb_abs_s16(const mb_abs_s16_params *params, const int16_t *input, int16_t *output,
                int32_t size);

#endif
