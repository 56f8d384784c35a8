#include "microbuild/kernels/conv2d.h"

#include "microbuild/quant.h"

void mb_conv2d_s8(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
                  const int32_t *bias, const int32_t *multipliers, const int32_t *shifts,
                  int8_t *output)
{
    const int32_t groups = p->input_c / p->filter_c;
    const int32_t filters_per_group = p->output_c / groups;
    int8_t *out = output;

    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                for (int32_t oc = 0; oc < p->output_c; oc++) {
                    const int32_t in_c0 = (oc / filters_per_group) * p->filter_c;
                    const int8_t *f = filter + oc * p->filter_h * p->filter_w * p->filter_c;
                    int32_t acc = 0;
                    for (int32_t ky = 0; ky < p->filter_h; ky++) {
                        const int32_t in_y = in_y0 + ky * p->dilation_h;
                        if (in_y < 0 || in_y >= p->input_h) {
                            continue; /* padding row: contributes nothing */
                        }
                        for (int32_t kx = 0; kx < p->filter_w; kx++) {
                            const int32_t in_x = in_x0 + kx * p->dilation_w;
                            if (in_x < 0 || in_x >= p->input_w) {
                                continue;
                            }
                            const int8_t *in_px = in_batch + (in_y * p->input_w + in_x) * p->input_c
                                                  + in_c0;
                            const int8_t *f_px = f + (ky * p->filter_w + kx) * p->filter_c;
                            for (int32_t ic = 0; ic < p->filter_c; ic++) {
                                acc += (int32_t)f_px[ic] * ((int32_t)in_px[ic] + p->input_offset);
                            }
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
