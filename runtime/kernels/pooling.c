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

/* One output pixel over a window of h rows x w columns starting at `in` (row_stride elements
 * apart), for C channels: a constant 1..8 after inlining, so the C sums or maxima stay in
 * registers and the window is walked once. Used where channels <= 8, the shapes on which the
 * per-channel loops below spend more on indexing than on pooling. */
#define MB_POOL_SMALL_PIXEL(AVG_PIXEL, MAX_PIXEL, T, LOWEST)                                    \
    static inline __attribute__((always_inline)) void AVG_PIXEL(                                \
        const mb_pool2d_s8_params *p, const T *in, int32_t row_stride, int32_t h, int32_t w,    \
        const int32_t C, T *out)                                                                \
    {                                                                                           \
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;                 \
        for (int32_t y = 0; y < h; y++, in += row_stride) {                                     \
            const T *pos = in;                                                                  \
            for (int32_t x = 0; x < w; x++, pos += C) {                                         \
                a0 += pos[0];                                                                   \
                if (C > 1) {                                                                    \
                    a1 += pos[1];                                                               \
                }                                                                               \
                if (C > 2) {                                                                    \
                    a2 += pos[2];                                                               \
                }                                                                               \
                if (C > 3) {                                                                    \
                    a3 += pos[3];                                                               \
                }                                                                               \
                if (C > 4) {                                                                    \
                    a4 += pos[4];                                                               \
                }                                                                               \
                if (C > 5) {                                                                    \
                    a5 += pos[5];                                                               \
                }                                                                               \
                if (C > 6) {                                                                    \
                    a6 += pos[6];                                                               \
                }                                                                               \
                if (C > 7) {                                                                    \
                    a7 += pos[7];                                                               \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        const int32_t count = h * w;                                                            \
        out[0] = (T)average(p, a0, count);                                                      \
        if (C > 1) {                                                                            \
            out[1] = (T)average(p, a1, count);                                                  \
        }                                                                                       \
        if (C > 2) {                                                                            \
            out[2] = (T)average(p, a2, count);                                                  \
        }                                                                                       \
        if (C > 3) {                                                                            \
            out[3] = (T)average(p, a3, count);                                                  \
        }                                                                                       \
        if (C > 4) {                                                                            \
            out[4] = (T)average(p, a4, count);                                                  \
        }                                                                                       \
        if (C > 5) {                                                                            \
            out[5] = (T)average(p, a5, count);                                                  \
        }                                                                                       \
        if (C > 6) {                                                                            \
            out[6] = (T)average(p, a6, count);                                                  \
        }                                                                                       \
        if (C > 7) {                                                                            \
            out[7] = (T)average(p, a7, count);                                                  \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    static inline __attribute__((always_inline)) void MAX_PIXEL(                                \
        const mb_pool2d_s8_params *p, const T *in, int32_t row_stride, int32_t h, int32_t w,    \
        const int32_t C, T *out)                                                                \
    {                                                                                           \
        int32_t a0 = (LOWEST), a1 = (LOWEST), a2 = (LOWEST), a3 = (LOWEST);                     \
        int32_t a4 = (LOWEST), a5 = (LOWEST), a6 = (LOWEST), a7 = (LOWEST);                     \
        for (int32_t y = 0; y < h; y++, in += row_stride) {                                     \
            const T *pos = in;                                                                  \
            for (int32_t x = 0; x < w; x++, pos += C) {                                         \
                a0 = pos[0] > a0 ? pos[0] : a0;                                                 \
                if (C > 1) {                                                                    \
                    a1 = pos[1] > a1 ? pos[1] : a1;                                             \
                }                                                                               \
                if (C > 2) {                                                                    \
                    a2 = pos[2] > a2 ? pos[2] : a2;                                             \
                }                                                                               \
                if (C > 3) {                                                                    \
                    a3 = pos[3] > a3 ? pos[3] : a3;                                             \
                }                                                                               \
                if (C > 4) {                                                                    \
                    a4 = pos[4] > a4 ? pos[4] : a4;                                             \
                }                                                                               \
                if (C > 5) {                                                                    \
                    a5 = pos[5] > a5 ? pos[5] : a5;                                             \
                }                                                                               \
                if (C > 6) {                                                                    \
                    a6 = pos[6] > a6 ? pos[6] : a6;                                             \
                }                                                                               \
                if (C > 7) {                                                                    \
                    a7 = pos[7] > a7 ? pos[7] : a7;                                             \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        const int32_t lo = p->activation_min, hi = p->activation_max;                           \
        out[0] = (T)mb_clamp_i32(a0, lo, hi);                                                   \
        if (C > 1) {                                                                            \
            out[1] = (T)mb_clamp_i32(a1, lo, hi);                                               \
        }                                                                                       \
        if (C > 2) {                                                                            \
            out[2] = (T)mb_clamp_i32(a2, lo, hi);                                               \
        }                                                                                       \
        if (C > 3) {                                                                            \
            out[3] = (T)mb_clamp_i32(a3, lo, hi);                                               \
        }                                                                                       \
        if (C > 4) {                                                                            \
            out[4] = (T)mb_clamp_i32(a4, lo, hi);                                               \
        }                                                                                       \
        if (C > 5) {                                                                            \
            out[5] = (T)mb_clamp_i32(a5, lo, hi);                                               \
        }                                                                                       \
        if (C > 6) {                                                                            \
            out[6] = (T)mb_clamp_i32(a6, lo, hi);                                               \
        }                                                                                       \
        if (C > 7) {                                                                            \
            out[7] = (T)mb_clamp_i32(a7, lo, hi);                                               \
        }                                                                                       \
    }

/* Every output pixel of a pooling with 1..8 channels: PIXEL (one of the above) with the channel
 * count as a constant. Returns 0 (did nothing) for other channel counts. */
#define MB_POOL_SMALL(NAME, PIXEL, T)                                                           \
    static int NAME(const mb_pool2d_s8_params *p, const T *input, T *output)                    \
    {                                                                                           \
        const int32_t c = p->channels;                                                          \
        if (c > 8) {                                                                            \
            return 0;                                                                           \
        }                                                                                       \
        const int32_t row_stride = p->input_w * c;                                              \
        T *out = output;                                                                        \
        for (int32_t b = 0; b < p->batches; b++) {                                              \
            const T *in_batch = input + b * p->input_h * row_stride;                            \
            for (int32_t oy = 0; oy < p->output_h; oy++) {                                      \
                for (int32_t ox = 0; ox < p->output_w; ox++, out += c) {                        \
                    int32_t y0, y1, x0, x1;                                                     \
                    clip_window(p, oy, ox, &y0, &y1, &x0, &x1);                                 \
                    const T *in = in_batch + y0 * row_stride + x0 * c;                          \
                    const int32_t h = y1 - y0, w = x1 - x0;                                     \
                    switch (c) {                                                                \
                    case 1: PIXEL(p, in, row_stride, h, w, 1, out); break;                      \
                    case 2: PIXEL(p, in, row_stride, h, w, 2, out); break;                      \
                    case 3: PIXEL(p, in, row_stride, h, w, 3, out); break;                      \
                    case 4: PIXEL(p, in, row_stride, h, w, 4, out); break;                      \
                    case 5: PIXEL(p, in, row_stride, h, w, 5, out); break;                      \
                    case 6: PIXEL(p, in, row_stride, h, w, 6, out); break;                      \
                    case 7: PIXEL(p, in, row_stride, h, w, 7, out); break;                      \
                    default: PIXEL(p, in, row_stride, h, w, 8, out); break;                     \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        return 1;                                                                               \
    }

MB_POOL_SMALL_PIXEL(avg_pixel_s8, max_pixel_s8, int8_t, INT8_MIN)
MB_POOL_SMALL_PIXEL(avg_pixel_s16, max_pixel_s16, int16_t, INT16_MIN)
MB_POOL_SMALL(avg_small_s8, avg_pixel_s8, int8_t)
MB_POOL_SMALL(max_small_s8, max_pixel_s8, int8_t)
MB_POOL_SMALL(avg_small_s16, avg_pixel_s16, int16_t)
MB_POOL_SMALL(max_small_s16, max_pixel_s16, int16_t)

/* TFLM's int8 and int16 pooling are one algorithm on two element types: T is the element type,
 * LOWEST its smallest value. */
#define MB_POOL_KERNELS(AVG, MAX, AVG_SMALL, MAX_SMALL, T, LOWEST)                           \
    void AVG(const mb_pool2d_s8_params *p, const T *input, T *output)                           \
    {                                                                                           \
        if (AVG_SMALL(p, input, output)) {                                                      \
            return;                                                                             \
        }                                                                                       \
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
        if (MAX_SMALL(p, input, output)) {                                                      \
            return;                                                                             \
        }                                                                                       \
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

MB_POOL_KERNELS(mb_avgpool2d_s8, mb_maxpool2d_s8, avg_small_s8, max_small_s8, int8_t, INT8_MIN)
MB_POOL_KERNELS(mb_avgpool2d_s16, mb_maxpool2d_s16, avg_small_s16, max_small_s16, int16_t,
                INT16_MIN)
