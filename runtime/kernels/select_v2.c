#include "microbuild/kernels/select_v2.h"

/* An odometer over the outer dimensions (offsets kept in step, no multiplication per row) and a
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
        int32_t c_offset = 0;                                                                   \
        int32_t x_offset = 0;                                                                   \
        int32_t y_offset = 0;                                                                   \
        for (;;) {                                                                              \
            const uint8_t *c = condition + c_offset;                                            \
            const T *xs = x + x_offset;                                                         \
            const T *ys = y + y_offset;                                                         \
            for (int32_t i = 0; i < n; i++) {                                                   \
                output[i] = c[i * c_step] ? xs[i * x_step] : ys[i * y_step];                    \
            }                                                                                   \
            output += n;                                                                        \
            int32_t d = last - 1;                                                               \
            while (d >= 0) {                                                                    \
                index[d]++;                                                                     \
                c_offset += shape->condition_strides[d];                                        \
                x_offset += shape->x_strides[d];                                                \
                y_offset += shape->y_strides[d];                                                \
                if (index[d] < shape->dims[d]) {                                                \
                    break;                                                                      \
                }                                                                               \
                c_offset -= shape->condition_strides[d] * shape->dims[d];                       \
                x_offset -= shape->x_strides[d] * shape->dims[d];                               \
                y_offset -= shape->y_strides[d] * shape->dims[d];                               \
                index[d] = 0;                                                                   \
                d--;                                                                            \
            }                                                                                   \
            if (d < 0) {                                                                        \
                return;                                                                         \
            }                                                                                   \
        }                                                                                       \
    }

MB_SELECT(mb_select_v2_s8, int8_t)
MB_SELECT(mb_select_v2_s16, int16_t)
MB_SELECT(mb_select_v2_f32, float)
