#include <stddef.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/depthwise_conv2d.h"
#include "microbuild/quant.h"

/* 16x8 CONV_2D and DEPTHWISE_CONV_2D: int16 activations with zero point 0 (no input offset),
 * int8 filters per channel, int64 bias. TFLM's int16 reference kernels sum in int64, skip the
 * taps in the padding, and requantize with the int64 form of MultiplyByQuantizedMultiplier. */

static int16_t requantize(int64_t acc, int32_t multiplier, int32_t shift, int32_t lo, int32_t hi)
{
    return (int16_t)mb_clamp_i32(mb_mul_by_quantized_multiplier_s64(acc, multiplier, (int)shift),
                                 lo, hi);
}

void mb_conv2d_s16(const mb_conv2d_s8_params *p, const int16_t *input, const int8_t *filter,
                   const int64_t *bias, const int32_t *multipliers, const int32_t *shifts,
                   int16_t *output)
{
    const int32_t groups = p->input_c / p->filter_c;
    const int32_t per_group = p->output_c / groups;
    int16_t *out = output;
    for (int32_t b = 0; b < p->batches; b++) {
        const int16_t *in = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t y0 = oy * p->stride_h - p->pad_top;
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                for (int32_t o = 0; o < p->output_c; o++) {
                    const int32_t c0 = (o / per_group) * p->filter_c;
                    const int8_t *f = filter + o * p->filter_h * p->filter_w * p->filter_c;
                    int64_t acc = 0;
                    for (int32_t ky = 0; ky < p->filter_h; ky++) {
                        const int32_t y = y0 + ky * p->dilation_h;
                        if (y < 0 || y >= p->input_h) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < p->filter_w; kx++) {
                            const int32_t x = x0 + kx * p->dilation_w;
                            if (x < 0 || x >= p->input_w) {
                                continue;
                            }
                            const int16_t *pixel = in + (y * p->input_w + x) * p->input_c + c0;
                            const int8_t *taps = f + (ky * p->filter_w + kx) * p->filter_c;
                            for (int32_t c = 0; c < p->filter_c; c++) {
                                acc += (int32_t)taps[c] * (int32_t)pixel[c];
                            }
                        }
                    }
                    if (bias != NULL) {
                        acc += bias[o];
                    }
                    *out++ = requantize(acc, multipliers[o], shifts[o], p->activation_min,
                                        p->activation_max);
                }
            }
        }
    }
}

void mb_depthwise_conv2d_s16(const mb_depthwise_conv2d_s8_params *p, const int16_t *input,
                             const int8_t *filter, const int64_t *bias,
                             const int32_t *multipliers, const int32_t *shifts, int16_t *output)
{
    const int32_t output_c = p->input_c * p->depth_multiplier;
    int16_t *out = output;
    for (int32_t b = 0; b < p->batches; b++) {
        const int16_t *in = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t y0 = oy * p->stride_h - p->pad_top;
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                for (int32_t o = 0; o < output_c; o++) {
                    const int32_t c = o / p->depth_multiplier;
                    int64_t acc = 0;
                    for (int32_t ky = 0; ky < p->filter_h; ky++) {
                        const int32_t y = y0 + ky * p->dilation_h;
                        if (y < 0 || y >= p->input_h) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < p->filter_w; kx++) {
                            const int32_t x = x0 + kx * p->dilation_w;
                            if (x < 0 || x >= p->input_w) {
                                continue;
                            }
                            acc += (int32_t)filter[(ky * p->filter_w + kx) * output_c + o] *
                                   (int32_t)in[(y * p->input_w + x) * p->input_c + c];
                        }
                    }
                    if (bias != NULL) {
                        acc += bias[o];
                    }
                    *out++ = requantize(acc, multipliers[o], shifts[o], p->activation_min,
                                        p->activation_max);
                }
            }
        }
    }
}
