/* LOGICAL_AND, LOGICAL_OR (with broadcasting) and LOGICAL_NOT on bool tensors, bit-exact with
 * TFLM's: TFLite's bool is one byte holding 0 or 1, and each output byte is the C logical
 * operation of the input bytes (0 or 1). The broadcast walk is the int8 one (broadcast.c): a bool
 * is moved as a byte. */
#ifndef MICROBUILD_KERNELS_LOGICAL_H
#define MICROBUILD_KERNELS_LOGICAL_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"

void mb_logical_and(const mb_broadcast_shape *shape, const uint8_t *input1,
                    const uint8_t *input2, uint8_t *output);
void mb_logical_or(const mb_broadcast_shape *shape, const uint8_t *input1, const uint8_t *input2,
                   uint8_t *output);
/* output[i] = !input[i] for i in [0, size); output may be input. */
void mb_logical_not(const uint8_t *input, uint8_t *output, int32_t size);

#endif
