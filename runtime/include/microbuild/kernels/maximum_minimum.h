/* MAXIMUM and MINIMUM (int8, int16) with broadcasting, bit-exact with TFLM's
 * MaximumMinimumBroadcastSlow: the raw quantized values are compared and one is copied. TFLM does
 * not rescale, so the compiler only accepts inputs and output that share one quantization. */
#ifndef MICROBUILD_KERNELS_MAXIMUM_MINIMUM_H
#define MICROBUILD_KERNELS_MAXIMUM_MINIMUM_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"

void mb_maximum_s8(const mb_broadcast_shape *shape, const int8_t *input1, const int8_t *input2,
                   int8_t *output);
void mb_minimum_s8(const mb_broadcast_shape *shape, const int8_t *input1, const int8_t *input2,
                   int8_t *output);
void mb_maximum_s16(const mb_broadcast_shape *shape, const int16_t *input1,
                    const int16_t *input2, int16_t *output);
void mb_minimum_s16(const mb_broadcast_shape *shape, const int16_t *input1,
                    const int16_t *input2, int16_t *output);

/* int8 variants (maximum_minimum_dsp.c: four bytes per SSUB8 + SEL; maximum_minimum_mve.c:
 * sixteen lanes per VMAX/VMIN): the reference's arguments, then the (unused) scratch pointer. */
void mb_maximum_s8_dsp(const mb_broadcast_shape *shape, const int8_t *input1,
                       const int8_t *input2, int8_t *output, void *scratch);
void mb_minimum_s8_dsp(const mb_broadcast_shape *shape, const int8_t *input1,
                       const int8_t *input2, int8_t *output, void *scratch);
void mb_maximum_s8_mve(const mb_broadcast_shape *shape, const int8_t *input1,
                       const int8_t *input2, int8_t *output, void *scratch);
void mb_minimum_s8_mve(const mb_broadcast_shape *shape, const int8_t *input1,
                       const int8_t *input2, int8_t *output, void *scratch);

#endif
