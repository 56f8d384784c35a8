#include "microbuild/kernels/pooling.h"

#include "microbuild/quant.h"

/* The part of a pooling window inside the input: rows [*y_start, *y_end), columns
 * [*x_start, *x_end). */
static void clip_window(const mb_pool2d_s8_params *p, int32_t oy, int32_t ox, int32_t *y_start,
                        int32_t *y_end, int32_t *x_start, int32_t *x_end)
{
    const int32_t in_y0 = oy * p->stride_h - p->pad_top;
    const int32_t in_x0 = ox * p->stride_w - p->pad_left;
    *y_start = in_y0 < 0 ? 0 : in_y0;
    *y_end = in_y0 + p->filter_h < p->input_h ? in_y0 + p->filter_h : p->input_h;
    *x_start = in_x0 < 0 ? 0 : in_x0;
    *x_end = in_x0 + p->filter_w < p->input_w ? in_x0 + p->filter_w : p->input_w;
}

/* Average pooling sums channels innermost, MB_POOL_BLOCK int32 accumulators at a time: each
 * window position is a contiguous run of channels in NHWC, so the full-block loop (constant trip
 * count) vectorizes, and a global average (the window is the whole input) is a plain sum of
 * channel vectors. */
#define MB_POOL_BLOCK 16

static int32_t average(const mb_pool2d_s8_params *p, int32_t acc, int32_t count)
{
    /* Round half away from zero; C division truncates toward zero. */
    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    return mb_clamp_i32(acc, p->activation_min, p->activation_max);
}

/* TFLM's int8 and int16 pooling are one algorithm on two element types: T is the element type,
 * LOWEST its smallest value. */
#define MB_POOL_KERNELS(AVG, MAX, T, LOWEST)                                                     \
    void AVG(const mb_pool2d_s8_params *p, const T *input, T *output)                           \
    {                                                                                           \
        T *out = output;                                                                        \
        for (int32_t b = 0; b < p->batches; b++) {                                              \
            const T *in_batch = input + b * p->input_h * p->input_w * p->channels;              \
            for (int32_t oy = 0; oy < p->output_h; oy++) {                                      \
                for (int32_t ox = 0; ox < p->output_w; ox++, out += p->channels) {              \
                    int32_t y_start, y_end, x_start, x_end;                                     \
                    clip_window(p, oy, ox, &y_start, &y_end, &x_start, &x_end);                 \
                    /* The compiler rejects shapes where a window misses the input. */         \
                    const int32_t count = (y_end - y_start) * (x_end - x_start);                \
                    int32_t c0 = 0;                                                             \
                    for (; c0 + MB_POOL_BLOCK <= p->channels; c0 += MB_POOL_BLOCK) {            \
                        int32_t acc[MB_POOL_BLOCK];                                             \
                        for (int32_t j = 0; j < MB_POOL_BLOCK; j++) {                           \
                            acc[j] = 0;                                                         \
                        }                                                                       \
                        for (int32_t y = y_start; y < y_end; y++) {                             \
                            for (int32_t x = x_start; x < x_end; x++) {                         \
                                const T *in = in_batch + (y * p->input_w + x) * p->channels + c0; \
                                for (int32_t j = 0; j < MB_POOL_BLOCK; j++) {                   \
                                    acc[j] += in[j];                                            \
                                }                                                               \
                            }                                                                   \
                        }                                                                       \
                        for (int32_t j = 0; j < MB_POOL_BLOCK; j++) {                           \
                            out[c0 + j] = (T)average(p, acc[j], count);                         \
                        }                                                                       \
                    }                                                                           \
                    for (int32_t c = c0; c < p->channels; c++) {                                \
                        int32_t acc = 0;                                                        \
                        for (int32_t y = y_start; y < y_end; y++) {                             \
                            for (int32_t x = x_start; x < x_end; x++) {                         \
                                acc += in_batch[(y * p->input_w + x) * p->channels + c];        \
                            }                                                                   \
                        }                                                                       \
                        out[c] = (T)average(p, acc, count);                                     \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    void MAX(const mb_pool2d_s8_params *p, const T *input, T *output)                           \
    {                                                                                           \
        T *out = output;                                                                        \
        for (int32_t b = 0; b < p->batches; b++) {                                              \
            const T *in_batch = input + b * p->input_h * p->input_w * p->channels;              \
            for (int32_t oy = 0; oy < p->output_h; oy++) {                                      \
                for (int32_t ox = 0; ox < p->output_w; ox++) {                                  \
                    int32_t y_start, y_end, x_start, x_end;                                     \
                    clip_window(p, oy, ox, &y_start, &y_end, &x_start, &x_end);                 \
                    for (int32_t c = 0; c < p->channels; c++) {                                 \
                        int32_t max = (LOWEST);                                                 \
                        for (int32_t y = y_start; y < y_end; y++) {                             \
                            for (int32_t x = x_start; x < x_end; x++) {                         \
                                const int32_t v =                                               \
                                    in_batch[(y * p->input_w + x) * p->channels + c];           \
                                max = v > max ? v : max;                                        \
                            }                                                                   \
                        }                                                                       \
                        *out++ = (T)mb_clamp_i32(max, p->activation_min, p->activation_max);    \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }

MB_POOL_KERNELS(mb_avgpool2d_s8, mb_maxpool2d_s8, int8_t, INT8_MIN)
MB_POOL_KERNELS(mb_avgpool2d_s16, mb_maxpool2d_s16, int16_t, INT16_MIN)
