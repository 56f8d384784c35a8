#include "microbuild/kernels/depthwise_conv2d.h"

#include "microbuild/quant.h"

void mb_depthwise_conv2d_s8(const mb_depthwise_conv2d_s8_params *p, const int8_t *input,
                            const int8_t *filter, const int32_t *bias, const int32_t *multipliers,
                            const int32_t *shifts, int8_t *output)
{
    const int32_t output_c = p->input_c * p->depth_multiplier;
    int8_t *out = output;

    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                /* Output channels are laid out input channel major, multiplier minor, so walking
                 * oc in order writes the output sequentially. */
                for (int32_t oc = 0; oc < output_c; oc++) {
                    const int32_t ic = oc / p->depth_multiplier;
                    int32_t acc = 0;
                    for (int32_t ky = 0; ky < p->filter_h; ky++) {
                        const int32_t in_y = in_y0 + ky * p->dilation_h;
                        if (in_y < 0 || in_y >= p->input_h) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < p->filter_w; kx++) {
                            const int32_t in_x = in_x0 + kx * p->dilation_w;
                            if (in_x < 0 || in_x >= p->input_w) {
                                continue;
                            }
                            const int32_t in_v = in_batch[(in_y * p->input_w + in_x) * p->input_c
                                                          + ic];
                            const int32_t f_v = filter[(ky * p->filter_w + kx) * output_c + oc];
                            acc += f_v * (in_v + p->input_offset);
                        }
                    }
                    if (bias != 0) {
                        acc += bias[oc];
                    }
                    acc = mb_mul_by_quantized_multiplier(acc, multipliers[oc], (int)shifts[oc]);
                    acc += p->output_offset;
                    *out++ = (int8_t)mb_clamp_i32(acc, p->activation_min, p->activation_max);
                }
            }
        }
    }
}
