/* PRELU (int8; int16 input with int8 alpha) with alpha broadcast against the input, bit-exact
 * with TFLM's BroadcastPrelu4DSlow: a non-negative (input - zero point) is rescaled by
 * input_scale / output_scale (multiplier 1); a negative one is multiplied by (alpha - alpha zero
 * point) and rescaled by input_scale * alpha_scale / output_scale (multiplier 2). The result is
 * offset and clamped to the type's range.
 *
 * The int16 kernel takes alpha widened to int16 at compile time, so both walk the broadcast with
 * one element type (microbuild/kernels/broadcast.h: input is a, alpha is b). */
#ifndef MICROBUILD_KERNELS_PRELU_H
#define MICROBUILD_KERNELS_PRELU_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"

typedef struct {
    int32_t input_offset;      /* minus the input's zero point */
    int32_t alpha_offset;      /* minus alpha's zero point */
    int32_t output_offset;     /* the output's zero point */
    int32_t output_multiplier_1;
    int32_t output_shift_1;    /* > 0 shifts left */
    int32_t output_multiplier_2;
    int32_t output_shift_2;    /* > 0 shifts left */
} mb_prelu_params;

void mb_prelu_s8(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                 const int8_t *input, const int8_t *alpha, int8_t *output);
void mb_prelu_s16(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                  const int16_t *input, const int16_t *alpha, int16_t *output);

/* Variants "fast" and "fast_s16" (microbuild/compiler/ops/prelu.py, prelu_fast.c): the same
 * arguments plus the (unused) scratch pointer, the same bytes out; portable C with quant_fast.h's
 * requantization. */
void mb_prelu_s8_fast(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                      const int8_t *input, const int8_t *alpha, int8_t *output, void *scratch);
void mb_prelu_s16_fast(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                       const int16_t *input, const int16_t *alpha, int16_t *output,
                       void *scratch);

/* Variants "mve" and "mve_s16" (prelu_mve.c, Cortex-M55/M85): the same arguments and bytes out;
 * four int32 lanes, both rescalings computed and one kept per lane. */
void mb_prelu_s8_mve(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                     const int8_t *input, const int8_t *alpha, int8_t *output, void *scratch);
void mb_prelu_s16_mve(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                      const int16_t *input, const int16_t *alpha, int16_t *output,
                      void *scratch);

#endif
