#include "microbuild/kernels/broadcast.h"

/* One walker for every element type: NAME, the input element type T, the output element type
 * TOUT and ROW, its row function type. */
#define MB_BROADCAST_WALKER(NAME, T, TOUT, ROW)                                                    \
void NAME(const mb_broadcast_shape *shape, const T *a, const T *b, TOUT *out, ROW row,             \
          const void *params)                                                                      \
{                                                                                                  \
    const int32_t last = shape->num_dims - 1;                                                      \
    const int32_t row_length = shape->dims[last];                                                  \
    int32_t index[MB_BROADCAST_MAX_DIMS] = {0};                                                    \
    const int32_t *const strides[2] = {shape->a_strides, shape->b_strides};                       \
    int32_t offsets[2] = {0, 0};                                                                   \
    do {                                                                                           \
        row(params, a + offsets[0], shape->a_strides[last], b + offsets[1],                        \
            shape->b_strides[last], out, row_length);                                              \
        out += row_length;                                                                         \
    } while (mb_broadcast_next_row(shape->dims, last, index, 2, strides, offsets));                \
}

MB_BROADCAST_WALKER(mb_broadcast_binary_s8, int8_t, int8_t, mb_binary_row_s8)
MB_BROADCAST_WALKER(mb_broadcast_binary_s16, int16_t, int16_t, mb_binary_row_s16)
MB_BROADCAST_WALKER(mb_broadcast_binary_f32, float, float, mb_binary_row_f32)
MB_BROADCAST_WALKER(mb_broadcast_binary_s32, int32_t, int32_t, mb_binary_row_s32)
MB_BROADCAST_WALKER(mb_broadcast_binary_s8_bool, int8_t, uint8_t, mb_binary_row_s8_bool)
MB_BROADCAST_WALKER(mb_broadcast_binary_f32_bool, float, uint8_t, mb_binary_row_f32_bool)
