#include "microbuild/kernels/select_v2.h"

/* The broadcasting walk over the outer dimensions (broadcast.h's mb_broadcast_next_row) and a
 * tight loop over the innermost one. Each output element is written after its inputs are read,
 * so the output may share x's buffer when x is not broadcast. */
#define MB_SELECT(NAME, T)                                                                       \
    void NAME(const mb_select_shape *shape, const uint8_t *condition, const T *x, const T *y,   \
              T *output)                                                                        \
    {                                                                                           \
        const int32_t last = shape->num_dims - 1;                                               \
        const int32_t n = shape->dims[last];                                                    \
        const int32_t c_step = shape->condition_strides[last];                                  \
        const int32_t x_step = shape->x_strides[last];                                          \
        const int32_t y_step = shape->y_strides[last];                                          \
        int32_t index[MB_BROADCAST_MAX_DIMS] = {0};                                             \
        const int32_t *const strides[3] = {shape->condition_strides, shape->x_strides,          \
                                           shape->y_strides};                                   \
        int32_t offsets[3] = {0, 0, 0};                                                         \
        do {                                                                                    \
            const uint8_t *c = condition + offsets[0];                                          \
            const T *xs = x + offsets[1];                                                       \
            const T *ys = y + offsets[2];                                                       \
            for (int32_t i = 0; i < n; i++) {                                                   \
                output[i] = c[i * c_step] ? xs[i * x_step] : ys[i * y_step];                    \
            }                                                                                   \
            output += n;                                                                        \
        } while (mb_broadcast_next_row(shape->dims, last, index, 3, strides, offsets));         \
    }

MB_SELECT(mb_select_v2_s8, int8_t)
MB_SELECT(mb_select_v2_s16, int16_t)
MB_SELECT(mb_select_v2_f32, float)
