/* Int8 MUL with broadcasting, bit-exact with TFLM's reference_integer_ops::Mul: the product of the
 * two zero-point-corrected inputs is rescaled by input1_scale * input2_scale / output_scale. */
#ifndef MICROBUILD_KERNELS_MUL_H
#define MICROBUILD_KERNELS_MUL_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"

typedef struct {
    int32_t input1_offset;     /* minus input 1's zero point */
    int32_t input2_offset;     /* minus input 2's zero point */
    int32_t output_multiplier;
    int32_t output_shift;      /* > 0 shifts left */
    int32_t output_offset;     /* output zero point */
    int32_t activation_min;
    int32_t activation_max;
} mb_mul_s8_params;

void mb_mul_s8(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
               const int8_t *input1, const int8_t *input2, int8_t *output);
/* 16x8 MUL: the same arithmetic on int16 values with an int16 clamp. */
void mb_mul_s16(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                const int16_t *input1, const int16_t *input2, int16_t *output);

/* Variant "fast" (microbuild/compiler/ops/mul.py): the same arguments plus the (unused) scratch
 * pointer, the same bytes out; portable C with quant_fast.h's requantization (mul_portable.c). */
void mb_mul_s8_fast(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                    const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
/* Variant "mve": Helium, four int32 lanes (mul_mve.c). */
void mb_mul_s8_mve(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
/* Variants "dsp" and "dsp_s16": Arm DSP, 4 int8 or 2 int16 elements a word (mul_dsp.c). */
void mb_mul_s8_dsp(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
void mb_mul_s16_dsp(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch);
/* fast_s16, mve_s16: the 16x8 forms of fast and mve (int16 elements, the same arithmetic). */
void mb_mul_s16_fast(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                     const int16_t *input1, const int16_t *input2, int16_t *output,
                     void *scratch);
void mb_mul_s16_mve(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch);

#endif
