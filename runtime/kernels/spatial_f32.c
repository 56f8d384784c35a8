#include "microbuild/kernels/spatial_f32.h"

#include "microbuild/kernels/depthwise_conv2d_taps.h"
#include "microbuild/kernels/dot_f32.h"

#include <math.h>
#include <stddef.h>

/* Output channels oc..oc + lanes - 1 (lanes a constant 1-4 in each copy; one group's) at one
 * output position: their sums side by side, sharing every input load, each in the reference's
 * order: taps row by row, inside the image only, channels in order, from 0 (then + bias and the
 * activation range, by the caller). f is channel oc's filter. */
static inline __attribute__((always_inline)) void conv_lanes(const mb_spatial_f32_params *p,
                                                             const float *image, const float *f,
                                                             int32_t first_c, int32_t y0,
                                                             int32_t x0, int32_t lanes,
                                                             float sums[4])
{
    const int32_t filter_size = p->filter_h * p->filter_w * p->filter_c;
    float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f;
    for (int32_t fy = 0; fy < p->filter_h; fy++) {
        const int32_t y = y0 + p->dilation_h * fy;
        for (int32_t fx = 0; fx < p->filter_w; fx++) {
            const int32_t x = x0 + p->dilation_w * fx;
            if (y < 0 || y >= p->input_h || x < 0 || x >= p->input_w) {
                continue;
            }
            const float *in = image + (y * p->input_w + x) * p->input_c + first_c;
            const float *w0 = f + (fy * p->filter_w + fx) * p->filter_c;
            const float *w1 = w0 + filter_size;
            const float *w2 = w1 + filter_size;
            const float *w3 = w2 + filter_size;
            for (int32_t c = 0; c < p->filter_c; c++) {
                const float v = in[c];
                t0 = MB_F32_MULADD(t0, v, w0[c]);
                if (lanes > 1) {
                    t1 = MB_F32_MULADD(t1, v, w1[c]);
                }
                if (lanes > 2) {
                    t2 = MB_F32_MULADD(t2, v, w2[c]);
                }
                if (lanes > 3) {
                    t3 = MB_F32_MULADD(t3, v, w3[c]);
                }
            }
        }
    }
    sums[0] = t0, sums[1] = t1, sums[2] = t2, sums[3] = t3;
}

/* CONV_2D without groups and with columns one apart: at one output position, the taps of a
 * filter row that lie inside the input are contiguous in the input (columns x channels) and in
 * each filter, so a row is one run of the dot products of dot_f32.h, which continue the sums
 * row after row: each output's sum has conv_lanes's terms in its order. Four output
 * channels per pass share the input loads (and the eight-float loads of dot_f32.c). */
static void conv_rows(const mb_spatial_f32_params *p, const float *input, const float *filter,
                      const float *bias, float *output)
{
    const int32_t filter_size = p->filter_h * p->filter_w * p->filter_c;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            int32_t fy_first, fy_last;
            mb_dw_tap_range(y0, p->filter_h, p->dilation_h, p->input_h, &fy_first, &fy_last);
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                int32_t fx_first, fx_last;
                mb_dw_tap_range(x0, p->filter_w, 1, p->input_w, &fx_first, &fx_last);
                const int32_t run = (fx_last - fx_first) * p->input_c;
                /* the run of filter row fy: at filter offset fy * row + skip */
                const int32_t row = p->filter_w * p->filter_c;
                const int32_t skip = fx_first * p->filter_c;
                int32_t oc = 0;
                for (; oc + 4 <= p->output_c; oc += 4) {
                    float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    for (int32_t fy = fy_first; fy < fy_last; fy++) {
                        const int32_t y = y0 + p->dilation_h * fy;
                        const float *x = image + (y * p->input_w + x0 + fx_first) * p->input_c;
                        const float *w = filter + oc * filter_size + fy * row + skip;
                        const float *const rows[4] = {w, w + filter_size, w + 2 * filter_size,
                                                      w + 3 * filter_size};
                        mb_f32_dot4_add(x, run, rows, sums);
                    }
                    for (int32_t k = 0; k < 4; k++) {
                        const float bias_value = bias != NULL ? bias[oc + k] : 0.0f;
                        *output++ = mb_f32_clamp(sums[k] + bias_value, p->activation_min,
                                                 p->activation_max);
                    }
                }
                for (; oc < p->output_c; oc++) {
                    float sum = 0.0f;
                    for (int32_t fy = fy_first; fy < fy_last; fy++) {
                        const int32_t y = y0 + p->dilation_h * fy;
                        const float *x = image + (y * p->input_w + x0 + fx_first) * p->input_c;
                        const float *w = filter + oc * filter_size + fy * row + skip;
                        sum = mb_f32_dot1_add(sum, x, run, w);
                    }
                    const float bias_value = bias != NULL ? bias[oc] : 0.0f;
                    *output++ = mb_f32_clamp(sum + bias_value, p->activation_min,
                                             p->activation_max);
                }
            }
        }
    }
}

void mb_conv2d_f32(const mb_spatial_f32_params *p, const float *input, const float *filter,
                   const float *bias, float *output)
{
    if (p->filter_c == p->input_c && p->dilation_w == 1) {
        conv_rows(p, input, filter, bias, output);
        return;
    }

    const int32_t groups = p->input_c / p->filter_c;
    const int32_t per_group = p->output_c / groups;
    const int32_t filter_size = p->filter_h * p->filter_w * p->filter_c;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                int32_t oc = 0;
                while (oc < p->output_c) {
                    const int32_t group = oc / per_group;
                    const int32_t first_c = group * p->filter_c;
                    const float *f = filter + oc * filter_size;
                    float sums[4];
                    const int32_t left = (group + 1) * per_group - oc;
                    const int32_t count = left < 4 ? left : 4;
                    /* the group's last 1-3 channels side by side too (a copy per count) */
                    if (count == 4) {
                        conv_lanes(p, image, f, first_c, y0, x0, 4, sums);
                    } else if (count == 3) {
                        conv_lanes(p, image, f, first_c, y0, x0, 3, sums);
                    } else if (count == 2) {
                        conv_lanes(p, image, f, first_c, y0, x0, 2, sums);
                    } else {
                        conv_lanes(p, image, f, first_c, y0, x0, 1, sums);
                    }
                    for (int32_t k = 0; k < count; k++, oc++) {
                        const float bias_value = bias != NULL ? bias[oc] : 0.0f;
                        *output++ = mb_f32_clamp(sums[k] + bias_value, p->activation_min,
                                                 p->activation_max);
                    }
                }
            }
        }
    }
}

/* The taps of one output position that lie inside the input: rows [fy_first, fy_last) and
 * columns [fx_first, fx_last) of the filter, from input position (y0, x0). */
typedef struct {
    int32_t y0, x0;
    int32_t fy_first, fy_last, fx_first, fx_last;
} window_taps;

/* Four depthwise channels oc..oc+3 side by side, each summed over the window's taps in the
 * reference's order (row by row, inside the image only). Their input channels are
 * ic + i0..i3: inlined with constant offsets for multipliers 1 and 2, so each tap is four
 * loads at fixed offsets and four multiply-adds. */
static inline __attribute__((always_inline)) void depthwise_four(
    const mb_spatial_f32_params *p, const float *image, const float *filter, const window_taps *t,
    int32_t oc, int32_t ic, int32_t i0, int32_t i1, int32_t i2, int32_t i3, float sums[4])
{
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int32_t fy = t->fy_first; fy < t->fy_last; fy++) {
        const int32_t y = t->y0 + p->dilation_h * fy;
        const float *in_row = image + y * p->input_w * p->input_c + ic;
        const float *w_row = filter + fy * p->filter_w * p->output_c + oc;
        for (int32_t fx = t->fx_first; fx < t->fx_last; fx++) {
            const float *in = in_row + (t->x0 + p->dilation_w * fx) * p->input_c;
            const float *w = w_row + fx * p->output_c;
            s0 = MB_F32_MULADD(s0, in[i0], w[0]);
            s1 = MB_F32_MULADD(s1, in[i1], w[1]);
            s2 = MB_F32_MULADD(s2, in[i2], w[2]);
            s3 = MB_F32_MULADD(s3, in[i3], w[3]);
        }
    }
    sums[0] = s0, sums[1] = s1, sums[2] = s2, sums[3] = s3;
}

/* One depthwise channel, in the same order. */
static float depthwise_one(const mb_spatial_f32_params *p, const float *image, const float *filter,
                           const window_taps *t, int32_t oc)
{
    const int32_t ic = oc / p->depth_multiplier;
    float sum = 0.0f;
    for (int32_t fy = t->fy_first; fy < t->fy_last; fy++) {
        const int32_t y = t->y0 + p->dilation_h * fy;
        for (int32_t fx = t->fx_first; fx < t->fx_last; fx++) {
            const int32_t x = t->x0 + p->dilation_w * fx;
            sum = MB_F32_MULADD(sum, image[(y * p->input_w + x) * p->input_c + ic],
                                filter[(fy * p->filter_w + fx) * p->output_c + oc]);
        }
    }
    return sum;
}

void mb_depthwise_conv2d_f32(const mb_spatial_f32_params *p, const float *input,
                             const float *filter, const float *bias, float *output)
{
    const int32_t channels = p->output_c;
    const int32_t multiplier = p->depth_multiplier;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            window_taps t;
            t.y0 = oy * p->stride_h - p->pad_top;
            mb_dw_tap_range(t.y0, p->filter_h, p->dilation_h, p->input_h, &t.fy_first,
                            &t.fy_last);
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                t.x0 = ox * p->stride_w - p->pad_left;
                mb_dw_tap_range(t.x0, p->filter_w, p->dilation_w, p->input_w, &t.fx_first,
                            &t.fx_last);
                int32_t oc = 0;
                for (; oc + 4 <= channels; oc += 4) {
                    float sums[4];
                    const int32_t ic = oc / multiplier;
                    if (multiplier == 1) {
                        depthwise_four(p, image, filter, &t, oc, ic, 0, 1, 2, 3, sums);
                    } else if (multiplier == 2) { /* oc even: channels ic, ic, ic + 1, ic + 1 */
                        depthwise_four(p, image, filter, &t, oc, ic, 0, 0, 1, 1, sums);
                    } else {
                        depthwise_four(p, image, filter, &t, oc, ic, 0, (oc + 1) / multiplier - ic,
                                       (oc + 2) / multiplier - ic, (oc + 3) / multiplier - ic,
                                       sums);
                    }
                    for (int32_t k = 0; k < 4; k++) {
                        const float bias_value = bias != NULL ? bias[oc + k] : 0.0f;
                        *output++ = mb_f32_clamp(sums[k] + bias_value, p->activation_min,
                                                 p->activation_max);
                    }
                }
                for (; oc < channels; oc++) {
                    const float bias_value = bias != NULL ? bias[oc] : 0.0f;
                    *output++ = mb_f32_clamp(depthwise_one(p, image, filter, &t, oc) + bias_value,
                                             p->activation_min, p->activation_max);
                }
            }
        }
    }
}

/* The window of output (oy, ox) clipped to the input: [y_start, y_end) x [x_start, x_end). */
static void pool_window(const mb_spatial_f32_params *p, int32_t oy, int32_t ox, int32_t *y_start,
                        int32_t *y_end, int32_t *x_start, int32_t *x_end)
{
    const int32_t y0 = oy * p->stride_h - p->pad_top;
    const int32_t x0 = ox * p->stride_w - p->pad_left;
    *y_start = y0 < 0 ? 0 : y0;
    *x_start = x0 < 0 ? 0 : x0;
    *y_end = y0 + p->filter_h < p->input_h ? y0 + p->filter_h : p->input_h;
    *x_end = x0 + p->filter_w < p->input_w ? x0 + p->filter_w : p->input_w;
}

/* The pooling of `lanes` adjacent channels (a constant 1-4 in each copy) of one window: their
 * results side by side in locals, so the window's taps are walked once per 4 channels instead of
 * once per channel; each channel's arithmetic is the reference's, in its order.
 *   MEAN / L2: the sum from 0 of x, or of x * x, in row-major order, divided by the float count
 *     of taps (an empty window would divide by 0, as in TFLM); L2 then takes sqrtf;
 *   MAX: from -FLT_MAX, max < x ? x : max (std::max(max, x): the first of equal values, -0.0
 *     before +0.0, a NaN never taken), as TFLM's loop.
 * Then the activation clamp and the store. */
enum { POOL_MEAN, POOL_L2, POOL_MAX };

/* One tap of one channel's pooling. */
static inline __attribute__((always_inline)) float pool_step(float acc, float x, int kind)
{
    if (kind == POOL_MAX) {
        return acc < x ? x : acc;
    }
    return kind == POOL_L2 ? MB_F32_MULADD(acc, x, x) : acc + x;
}

/* One channel's result from its accumulator: the mean (and root), clamped. */
static inline __attribute__((always_inline)) float pool_result(float acc, float count,
                                                               int kind, float low, float high)
{
    if (kind != POOL_MAX) {
        acc = acc / count;
        if (kind == POOL_L2) {
            acc = sqrtf(acc);
        }
    }
    return mb_f32_clamp(acc, low, high);
}

/* Named locals, not an array: GCC kept an array of 4 on the stack and looped over it. */
static inline __attribute__((always_inline)) void pool_lanes(const float *corner, int32_t rows,
                                                             int32_t cols, int32_t pitch,
                                                             int32_t depth, int32_t lanes,
                                                             int kind, float low, float high,
                                                             float *out)
{
    const float start = kind == POOL_MAX ? -FLT_MAX : 0.0f;
    float a0 = start, a1 = start, a2 = start, a3 = start;
    for (int32_t y = 0; y < rows; y++) {
        const float *v = corner + y * pitch;
        for (int32_t x = 0; x < cols; x++, v += depth) {
            a0 = pool_step(a0, v[0], kind);
            if (lanes > 1) {
                a1 = pool_step(a1, v[1], kind);
            }
            if (lanes > 2) {
                a2 = pool_step(a2, v[2], kind);
            }
            if (lanes > 3) {
                a3 = pool_step(a3, v[3], kind);
            }
        }
    }
    const float count = (float)(rows * cols);
    out[0] = pool_result(a0, count, kind, low, high);
    if (lanes > 1) {
        out[1] = pool_result(a1, count, kind, low, high);
    }
    if (lanes > 2) {
        out[2] = pool_result(a2, count, kind, low, high);
    }
    if (lanes > 3) {
        out[3] = pool_result(a3, count, kind, low, high);
    }
}

/* Every output pixel's window clipped to the input, its channels 4 at a time. The parameters
 * are read into locals once: the output is float, as are the clamp bounds in *p, so each store
 * would otherwise make the compiler reload every parameter. */
static inline __attribute__((always_inline)) void pool(const mb_spatial_f32_params *p,
                                                       const float *input, float *output,
                                                       int kind)
{
    const int32_t depth = p->input_c, pitch = p->input_w * depth;
    const float low = p->activation_min, high = p->activation_max;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * pitch;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            for (int32_t ox = 0; ox < p->output_w; ox++, output += depth) {
                int32_t ys, ye, xs, xe;
                pool_window(p, oy, ox, &ys, &ye, &xs, &xe);
                const float *corner = image + ys * pitch + xs * depth;
                const int32_t rows = ye - ys, cols = xe - xs;
                int32_t c = 0;
                for (; c + 4 <= depth; c += 4) {
                    pool_lanes(corner + c, rows, cols, pitch, depth, 4, kind, low, high,
                               output + c);
                }
                switch (depth - c) {
                case 1:
                    pool_lanes(corner + c, rows, cols, pitch, depth, 1, kind, low, high,
                               output + c);
                    break;
                case 2:
                    pool_lanes(corner + c, rows, cols, pitch, depth, 2, kind, low, high,
                               output + c);
                    break;
                case 3:
                    pool_lanes(corner + c, rows, cols, pitch, depth, 3, kind, low, high,
                               output + c);
                    break;
                default:
                    break;
                }
            }
        }
    }
}

void mb_average_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output)
{
    pool(p, input, output, POOL_MEAN);
}

void mb_l2_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output)
{
    pool(p, input, output, POOL_L2);
}

void mb_max_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output)
{
    pool(p, input, output, POOL_MAX);
}
