/* CONV_2D on float32, Helium variant "mve_f32" (see f32_mve.h: reorders each sum into four lanes,
 * so NOT bit-exact with TFLM; chosen only with --allow-float-reorder).
 *
 * Per output position and four output channels of a group at a time: for each filter tap inside
 * the input, the tap's filter_c input channels are read four at a time and multiplied into four
 * lane accumulators per output channel (VFMA); the last filter_c % 4 channels use tail
 * predication. Taps outside the input are skipped, as in TFLM. */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)

#include <stddef.h>

#include "microbuild/kernels/f32_mve.h"

/* Output channels oc .. oc + count - 1 (count 1..4, one group) at one output position. */
static void conv_channels(const mb_spatial_f32_params *p, const float *image, const float *f,
                          int32_t first_c, int32_t y0, int32_t x0, int32_t count,
                          float32x4_t acc[4])
{
    const int32_t filter_size = p->filter_h * p->filter_w * p->filter_c;
    const int32_t whole = p->filter_c & ~3;
    const int32_t tail = p->filter_c - whole;
    const mve_pred16_t tail_lanes = vctp32q((uint32_t)tail);
    for (int32_t k = 0; k < 4; k++) {
        acc[k] = vdupq_n_f32(0.0f);
    }
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
            const float *in = image + (y * p->input_w + x) * p->input_c + first_c;
            const float *w = f + (fy * p->filter_w + fx) * p->filter_c;
            for (int32_t c = 0; c < whole; c += 4) {
                const float32x4_t v = vld1q_f32(in + c);
                for (int32_t k = 0; k < count; k++) {
                    acc[k] = vfmaq_f32(acc[k], v, vld1q_f32(w + k * filter_size + c));
                }
            }
            if (tail > 0) {
                const float32x4_t v = vldrwq_z_f32(in + whole, tail_lanes);
                for (int32_t k = 0; k < count; k++) {
                    acc[k] = vfmaq_m_f32(acc[k], v,
                                         vldrwq_z_f32(w + k * filter_size + whole, tail_lanes),
                                         tail_lanes);
                }
            }
        }
    }
}

void mb_conv2d_f32_mve(const mb_spatial_f32_params *p, const float *input, const float *filter,
                       const float *bias, float *output, void *scratch)
{
    const int32_t groups = p->input_c / p->filter_c;
    const int32_t per_group = p->output_c / groups;
    const int32_t filter_size = p->filter_h * p->filter_w * p->filter_c;
    (void)scratch;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                float *out = output + ((b * p->output_h + oy) * p->output_w + ox) * p->output_c;
                int32_t oc = 0;
                while (oc < p->output_c) {
                    const int32_t group = oc / per_group;
                    const int32_t group_end = (group + 1) * per_group;
                    const int32_t count = group_end - oc < 4 ? group_end - oc : 4;
                    float32x4_t acc[4];
                    conv_channels(p, image, filter + oc * filter_size, group * p->filter_c, y0,
                                  x0, count, acc);
                    for (int32_t k = 0; k < count; k++) {
                        const float bias_value = bias != NULL ? bias[oc + k] : 0.0f;
                        out[oc + k] = mb_f32_clamp(mb_f32_mve_lanes_sum(acc[k]) + bias_value,
                                                   p->activation_min, p->activation_max);
                    }
                    oc += count;
                }
            }
        }
    }
}

#else
typedef int mb_conv2d_f32_mve_unused;
#endif
