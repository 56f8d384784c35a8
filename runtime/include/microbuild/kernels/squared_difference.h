/* SQUARED_DIFFERENCE (int8, int16) with broadcasting, bit-exact with TFLM's quantized kernel:
 * each input is rescaled to twice the larger input scale with left_shift bits of headroom (7 for
 * int8, 0 for int16), the difference is squared in int32 and rescaled to the output by a
 * multiplier that may shift left. The result is clamped to the type's range. */
#ifndef MICROBUILD_KERNELS_SQUARED_DIFFERENCE_H
#define MICROBUILD_KERNELS_SQUARED_DIFFERENCE_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"
#include "microbuild/kernels/rescale_pair.h"

typedef struct {
    MB_RESCALE_PAIR_FIELDS     /* left_shift: 7 for int8, 0 for int16 */
    int32_t output_multiplier;
    int32_t output_shift;      /* > 0 shifts left */
    int32_t output_offset;     /* output zero point */
    int32_t activation_min;    /* the output type's range */
    int32_t activation_max;
} mb_squared_difference_params;

void mb_squared_difference_s8(const mb_squared_difference_params *params,
                              const mb_broadcast_shape *shape, const int8_t *input1,
                              const int8_t *input2, int8_t *output);
void mb_squared_difference_s16(const mb_squared_difference_params *params,
                               const mb_broadcast_shape *shape, const int16_t *input1,
                               const int16_t *input2, int16_t *output);

/* int8 variant "lut" (squared_difference_lut.c): each input's rescaled value (at most 2^14 in
 * magnitude) looked up in a 256-entry int16 table the compiler builds, indexed by the value's
 * byte; the square and its rescaling to the output as in the reference. */
typedef struct {
    const mb_squared_difference_params *params;
    const int16_t *scaled1;
    const int16_t *scaled2;
} mb_squared_difference_lut;

void mb_squared_difference_s8_lut(const mb_squared_difference_lut *lut,
                                  const mb_broadcast_shape *shape, const int8_t *input1,
                                  const int8_t *input2, int8_t *output);

/* int16 variant "fast_s16" (squared_difference_fast.c): the reference's arithmetic with
 * quant_fast.h's requantization, a broadcast operand rescaled once per run. */
void mb_squared_difference_s16_fast(const mb_squared_difference_params *params,
                                    const mb_broadcast_shape *shape, const int16_t *input1,
                                    const int16_t *input2, int16_t *output, void *scratch);
/* int16 variant "dsp_s16" (the same file, Arm DSP): the inputs' steps as one SMMULR each. */
void mb_squared_difference_s16_dsp(const mb_squared_difference_params *params,
                                   const mb_broadcast_shape *shape, const int16_t *input1,
                                   const int16_t *input2, int16_t *output, void *scratch);

#endif
