#include "microbuild/kernels/spatial_f32.h"

#include <math.h>
#include <stddef.h>

void mb_conv2d_f32(const mb_spatial_f32_params *p, const float *input, const float *filter,
                   const float *bias, float *output)
{
    const int32_t groups = p->input_c / p->filter_c;
    const int32_t per_group = p->output_c / groups;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                for (int32_t oc = 0; oc < p->output_c; oc++) {
                    const int32_t first_c = (oc / per_group) * p->filter_c;
                    const float *f = filter + oc * p->filter_h * p->filter_w * p->filter_c;
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
                    const float bias_value = bias != NULL ? bias[oc] : 0.0f;
                    *output++ = mb_f32_clamp(total + bias_value, p->activation_min,
                                             p->activation_max);
                }
            }
        }
    }
}

void mb_depthwise_conv2d_f32(const mb_spatial_f32_params *p, const float *input,
                             const float *filter, const float *bias, float *output)
{
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                for (int32_t oc = 0; oc < p->output_c; oc++) {
                    const int32_t ic = oc / p->depth_multiplier;
                    float total = 0.0f;
                    for (int32_t fy = 0; fy < p->filter_h; fy++) {
                        const int32_t y = y0 + p->dilation_h * fy;
                        for (int32_t fx = 0; fx < p->filter_w; fx++) {
                            const int32_t x = x0 + p->dilation_w * fx;
                            if (y < 0 || y >= p->input_h || x < 0 || x >= p->input_w) {
                                continue;
                            }
                            total = MB_F32_MULADD(
                                total, image[(y * p->input_w + x) * p->input_c + ic],
                                filter[(fy * p->filter_w + fx) * p->output_c + oc]);
                        }
                    }
                    const float bias_value = bias != NULL ? bias[oc] : 0.0f;
                    *output++ = mb_f32_clamp(total + bias_value, p->activation_min,
                                             p->activation_max);
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
