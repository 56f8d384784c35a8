#include <stddef.h>

#include "microbuild/kernels/transpose_conv.h"
#include "microbuild/quant.h"

/* The first and one-past-last filter rows (or columns) of a window starting at `origin` that
 * land inside [0, size). */
static void clip(int32_t origin, int32_t filter, int32_t size, int32_t *lo, int32_t *hi)
{
    *lo = origin < 0 ? -origin : 0;
    *hi = size - origin < filter ? size - origin : filter;
}

/* Every input pixel times the filter, added into the output window it lands on (TFLM's
 * reference walks the input this way): the accumulators of all batches in scratch, zeroed first.
 * The int8 and 16x8 kernels differ only in the input element T, the accumulator ACC and the
 * input offset (0 for 16x8). */
#define MB_TRANSPOSE_CONV_SCATTER(NAME, T, ACC)                                                  \
    static void NAME(const mb_transpose_conv_params *p, const T *input, const int8_t *filter,    \
                     int32_t input_offset, ACC *scratch)                                         \
    {                                                                                           \
        const int32_t oc = p->output_c;                                                         \
        const int32_t out_image = p->output_h * p->output_w * oc;                               \
        const int32_t filter_per_channel = p->filter_h * p->filter_w * p->input_c;              \
        for (int32_t i = 0; i < p->batches * out_image; i++) {                                  \
            scratch[i] = 0;                                                                     \
        }                                                                                       \
        for (int32_t b = 0; b < p->batches; b++) {                                              \
            const T *in = input + b * p->input_h * p->input_w * p->input_c;                     \
            ACC *acc = scratch + b * out_image;                                                 \
            for (int32_t iy = 0; iy < p->input_h; iy++) {                                       \
                const int32_t y0 = iy * p->stride_h - p->pad_top;                               \
                int32_t ky0, ky1;                                                               \
                clip(y0, p->filter_h, p->output_h, &ky0, &ky1);                                 \
                for (int32_t ix = 0; ix < p->input_w; ix++) {                                   \
                    const int32_t x0 = ix * p->stride_w - p->pad_left;                          \
                    int32_t kx0, kx1;                                                           \
                    clip(x0, p->filter_w, p->output_w, &kx0, &kx1);                             \
                    const T *pixel = in + (iy * p->input_w + ix) * p->input_c;                  \
                    for (int32_t ky = ky0; ky < ky1; ky++) {                                    \
                        for (int32_t kx = kx0; kx < kx1; kx++) {                                \
                            ACC *dst = acc + ((y0 + ky) * p->output_w + (x0 + kx)) * oc;        \
                            const int8_t *taps = filter + (ky * p->filter_w + kx) * p->input_c; \
                            for (int32_t o = 0; o < oc; o++) {                                  \
                                const int8_t *f = taps + o * filter_per_channel;                \
                                ACC sum = 0;                                                    \
                                for (int32_t c = 0; c < p->input_c; c++) {                      \
                                    sum += ((int32_t)pixel[c] + input_offset) * (int32_t)f[c];  \
                                }                                                               \
                                dst[o] += sum;                                                  \
                            }                                                                   \
                        }                                                                       \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }

MB_TRANSPOSE_CONV_SCATTER(scatter_s8, int8_t, int32_t)
MB_TRANSPOSE_CONV_SCATTER(scatter_s16, int16_t, int64_t)

void mb_transpose_conv_s8(const mb_transpose_conv_params *p, const int8_t *input,
                          const int8_t *filter, const int32_t *bias, const int32_t *multipliers,
                          const int32_t *shifts, int8_t *output, int32_t *scratch)
{
    const int32_t oc = p->output_c;
    const int32_t total = p->batches * p->output_h * p->output_w * oc;
    scatter_s8(p, input, filter, p->input_offset, scratch);
    for (int32_t i = 0; i < total; i++) {
        const int32_t o = i % oc;
        int32_t v = scratch[i];
        if (bias != NULL) {
            v += bias[o];
        }
        v = mb_mul_by_quantized_multiplier(v, multipliers[o], (int)shifts[o]) + p->output_offset;
        output[i] = (int8_t)mb_clamp_i32(v, p->activation_min, p->activation_max);
    }
}

void mb_transpose_conv_s16(const mb_transpose_conv_params *p, const int16_t *input,
                           const int8_t *filter, const int64_t *bias,
                           const int32_t *multipliers, const int32_t *shifts, int16_t *output,
                           int64_t *scratch)
{
    const int32_t oc = p->output_c;
    const int32_t total = p->batches * p->output_h * p->output_w * oc;
    scatter_s16(p, input, filter, 0, scratch);
    for (int32_t i = 0; i < total; i++) {
        const int32_t o = i % oc;
        int64_t v = scratch[i];
        if (bias != NULL) {
            v += bias[o];
        }
        const int32_t scaled = mb_mul_by_quantized_multiplier_s64(v, multipliers[o],
                                                                  (int)shifts[o]);
        output[i] = (int16_t)mb_clamp_i32(scaled, p->activation_min, p->activation_max);
    }
}
