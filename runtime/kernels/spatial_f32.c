#include "microbuild/kernels/spatial_f32.h"

#include <math.h>
#include <stddef.h>

/* Output channel oc's sum at one output position, the reference's order: taps row by row, inside
 * the image only, channels in order; from 0, then + bias, then the activation range. */
static float conv_one(const mb_spatial_f32_params *p, const float *image, const float *f,
                      int32_t first_c, int32_t y0, int32_t x0)
{
    float total = 0.0f;
    for (int32_t fy = 0; fy < p->filter_h; fy++) {
        const int32_t y = y0 + p->dilation_h * fy;
        for (int32_t fx = 0; fx < p->filter_w; fx++) {
            const int32_t x = x0 + p->dilation_w * fx;
            if (y < 0 || y >= p->input_h || x < 0 || x >= p->input_w) {
                continue;
            }
            const float *in = image + (y * p->input_w + x) * p->input_c + first_c;
            const float *w = f + (fy * p->filter_w + fx) * p->filter_c;
            for (int32_t c = 0; c < p->filter_c; c++) {
                total = MB_F32_MULADD(total, in[c], w[c]);
            }
        }
    }
    return total;
}

/* Four output channels of one group at once: four sums side by side, each in conv_one's order,
 * sharing every input load. */
static void conv_four(const mb_spatial_f32_params *p, const float *image, const float *f,
                      int32_t first_c, int32_t y0, int32_t x0, float sums[4])
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
                t1 = MB_F32_MULADD(t1, v, w1[c]);
                t2 = MB_F32_MULADD(t2, v, w2[c]);
                t3 = MB_F32_MULADD(t3, v, w3[c]);
            }
        }
    }
    sums[0] = t0, sums[1] = t1, sums[2] = t2, sums[3] = t3;
}

void mb_conv2d_f32(const mb_spatial_f32_params *p, const float *input, const float *filter,
                   const float *bias, float *output)
{
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
                    int32_t count = 4;
                    if (oc + 4 <= (group + 1) * per_group) {
                        conv_four(p, image, f, first_c, y0, x0, sums);
                    } else {
                        sums[0] = conv_one(p, image, f, first_c, y0, x0);
                        count = 1;
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

void mb_depthwise_conv2d_f32(const mb_spatial_f32_params *p, const float *input,
                             const float *filter, const float *bias, float *output)
{
    const int32_t channels = p->output_c;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                /* Four output channels at once, each summed over the taps in the reference's
                 * order (row by row, inside the image only); their input channels are
                 * oc / depth_multiplier. */
                for (int32_t oc = 0; oc < channels; oc += 4) {
                    const int32_t count = channels - oc < 4 ? channels - oc : 4;
                    int32_t ic[4];
                    for (int32_t k = 0; k < 4; k++) {
                        ic[k] = (oc + (k < count ? k : 0)) / p->depth_multiplier;
                    }
                    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    for (int32_t fy = 0; fy < p->filter_h; fy++) {
                        const int32_t y = y0 + p->dilation_h * fy;
                        if (y < 0 || y >= p->input_h) {
                            continue;
                        }
                        for (int32_t fx = 0; fx < p->filter_w; fx++) {
                            const int32_t x = x0 + p->dilation_w * fx;
                            if (x < 0 || x >= p->input_w) {
                                continue;
                            }
                            const float *in = image + (y * p->input_w + x) * p->input_c;
                            const float *w = filter + (fy * p->filter_w + fx) * channels + oc;
                            if (count == 4) {
                                t[0] = MB_F32_MULADD(t[0], in[ic[0]], w[0]);
                                t[1] = MB_F32_MULADD(t[1], in[ic[1]], w[1]);
                                t[2] = MB_F32_MULADD(t[2], in[ic[2]], w[2]);
                                t[3] = MB_F32_MULADD(t[3], in[ic[3]], w[3]);
                            } else {
                                for (int32_t k = 0; k < count; k++) {
                                    t[k] = MB_F32_MULADD(t[k], in[ic[k]], w[k]);
                                }
                            }
                        }
                    }
                    for (int32_t k = 0; k < count; k++) {
                        const float bias_value = bias != NULL ? bias[oc + k] : 0.0f;
                        *output++ = mb_f32_clamp(t[k] + bias_value, p->activation_min,
                                                 p->activation_max);
                    }
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

/* AVERAGE_POOL_2D (squares 0) and L2_POOL_2D (squares 1): per window the sum from 0 of x, or of
 * x * x, in row-major order, divided by the float count of taps (an empty window would divide by
 * 0, as in TFLM); L2 then takes sqrtf. */
static void mean_pool(const mb_spatial_f32_params *p, const float *input, float *output,
                      int squares)
{
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                int32_t ys, ye, xs, xe;
                pool_window(p, oy, ox, &ys, &ye, &xs, &xe);
                for (int32_t c = 0; c < p->input_c; c++) {
                    float total = 0.0f;
                    int32_t count = 0;
                    for (int32_t y = ys; y < ye; y++) {
                        for (int32_t x = xs; x < xe; x++) {
                            const float v = image[(y * p->input_w + x) * p->input_c + c];
                            total = squares ? MB_F32_MULADD(total, v, v) : total + v;
                            count++;
                        }
                    }
                    const float mean = total / (float)count;
                    *output++ = mb_f32_clamp(squares ? sqrtf(mean) : mean, p->activation_min,
                                             p->activation_max);
                }
            }
        }
    }
}

void mb_average_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output)
{
    mean_pool(p, input, output, 0);
}

void mb_l2_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output)
{
    mean_pool(p, input, output, 1);
}

void mb_max_pool_f32(const mb_spatial_f32_params *p, const float *input, float *output)
{
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                int32_t ys, ye, xs, xe;
                pool_window(p, oy, ox, &ys, &ye, &xs, &xe);
                for (int32_t c = 0; c < p->input_c; c++) {
                    float max = -FLT_MAX;
                    for (int32_t y = ys; y < ye; y++) {
                        for (int32_t x = xs; x < xe; x++) {
                            const float v = image[(y * p->input_w + x) * p->input_c + c];
                            max = max < v ? v : max; /* std::max(max, v) */
                        }
                    }
                    *output++ = mb_f32_clamp(max, p->activation_min, p->activation_max);
                }
            }
        }
    }
}
