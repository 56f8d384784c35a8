#include "microbuild/kernels/transpose_conv_f32.h"

void mb_transpose_conv_f32(const mb_transpose_conv_f32_params *p, const float *input,
                           const float *filter, const float *bias, float *output)
{
    const int32_t out_c = p->output_c;
    const int32_t in_c = p->input_c;
    const int32_t out_image = p->output_h * p->output_w * out_c;
    const int32_t size = p->batches * out_image;
    for (int32_t i = 0; i < size; i++) {
        output[i] = 0.0f;
    }
    for (int32_t b = 0; b < p->batches; b++) {
        float *out_batch = output + b * out_image;
        for (int32_t in_y = 0; in_y < p->input_h; in_y++) {
            for (int32_t in_x = 0; in_x < p->input_w; in_x++) {
                const float *pixel = input + ((b * p->input_h + in_y) * p->input_w + in_x) * in_c;
                const int32_t y0 = in_y * p->stride_h - p->pad_top;
                const int32_t x0 = in_x * p->stride_w - p->pad_left;
                for (int32_t ic = 0; ic < in_c; ic++) {
                    const float value = pixel[ic];
                    for (int32_t fy = 0; fy < p->filter_h; fy++) {
                        const int32_t out_y = y0 + fy;
                        if (out_y < 0 || out_y >= p->output_h) {
                            continue;
                        }
                        for (int32_t fx = 0; fx < p->filter_w; fx++) {
                            const int32_t out_x = x0 + fx;
                            if (out_x < 0 || out_x >= p->output_w) {
                                continue;
                            }
                            float *out = out_batch + (out_y * p->output_w + out_x) * out_c;
                            /* filter[oc][fy][fx][ic] */
                            const float *w = filter + (fy * p->filter_w + fx) * in_c + ic;
                            const int32_t w_step = p->filter_h * p->filter_w * in_c;
                            for (int32_t oc = 0; oc < out_c; oc++) {
                                out[oc] = MB_F32_MULADD(out[oc], value, w[oc * w_step]);
                            }
                        }
                    }
                }
            }
        }
    }
    /* TFLM adds the bias in a pass of its own, then clamps in another: same values per element. */
    for (int32_t i = 0; i < size; i++) {
        const float v = bias != 0 ? output[i] + bias[i % out_c] : output[i];
        output[i] = mb_f32_clamp(v, p->activation_min, p->activation_max);
    }
}
