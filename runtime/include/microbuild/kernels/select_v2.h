/* SELECT_V2 (int8, int16 or float32 values, bool condition) with broadcasting of all three inputs,
 * bit-exact with TFLM's Select / BroadcastSelect5DSlow: out = condition ? x : y, raw values copied
 * (the compiler requires x, y and the output to share one quantization).
 *
 * The compiler reduces the three-way broadcast like the binary one (microbuild/kernels/
 * broadcast.h): size-1 output dimensions dropped, dimensions every input steps through
 * contiguously merged, a stride of 0 where an input is broadcast. */
#ifndef MICROBUILD_KERNELS_SELECT_V2_H
#define MICROBUILD_KERNELS_SELECT_V2_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"

typedef struct {
    int32_t num_dims;                              /* 1 .. MB_BROADCAST_MAX_DIMS */
    int32_t dims[MB_BROADCAST_MAX_DIMS];           /* output extents, outermost first */
    int32_t condition_strides[MB_BROADCAST_MAX_DIMS];
    int32_t x_strides[MB_BROADCAST_MAX_DIMS];
    int32_t y_strides[MB_BROADCAST_MAX_DIMS];
} mb_select_shape;

void mb_select_v2_s8(const mb_select_shape *shape, const uint8_t *condition, const int8_t *x,
                     const int8_t *y, int8_t *output);
void mb_select_v2_s16(const mb_select_shape *shape, const uint8_t *condition, const int16_t *x,
                      const int16_t *y, int16_t *output);
void mb_select_v2_f32(const mb_select_shape *shape, const uint8_t *condition, const float *x,
                      const float *y, float *output);

#endif
