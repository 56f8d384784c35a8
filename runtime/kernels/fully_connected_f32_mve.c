/* FULLY_CONNECTED on float32, Helium variant "mve_f32" (see f32_mve.h: reorders each sum into four
 * lanes, so NOT bit-exact with TFLM; chosen only with --allow-float-reorder).
 *
 * Four weight rows per pass share each vector load of the input: four VFMA per four depth
 * positions. The depth's last depth % 4 positions use tail predication (VCTP): masked lanes keep
 * their partial sum and read nothing. */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)

#include <stddef.h>

#include "microbuild/kernels/f32_mve.h"

/* One output: the lanes' partial sums in f32_mve.h's order, + bias, the activation range. */
static inline float finish(const mb_fully_connected_f32_params *p, const float *bias,
                           int32_t row, float32x4_t acc)
{
    const float bias_value = bias != NULL ? bias[row] : 0.0f;
    return mb_f32_clamp(mb_f32_mve_lanes_sum(acc) + bias_value, p->activation_min,
                        p->activation_max);
}

void mb_fully_connected_f32_mve(const mb_fully_connected_f32_params *p, const float *input,
                                const float *weights, const float *bias, float *output,
                                void *scratch)
{
    const int32_t depth = p->input_depth;
    const int32_t whole = depth & ~3;
    const int32_t tail = depth - whole;
    const mve_pred16_t tail_lanes = vctp32q((uint32_t)tail);
    (void)scratch;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *x = input + b * depth;
        float *y = output + b * p->output_depth;
        int32_t row = 0;
        for (; row + 4 <= p->output_depth; row += 4) {
            const float *w0 = weights + row * depth;
            const float *w1 = w0 + depth;
            const float *w2 = w1 + depth;
            const float *w3 = w2 + depth;
            float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
            for (int32_t d = 0; d < whole; d += 4) {
                const float32x4_t v = vld1q_f32(x + d);
                a0 = vfmaq_f32(a0, v, vld1q_f32(w0 + d));
                a1 = vfmaq_f32(a1, v, vld1q_f32(w1 + d));
                a2 = vfmaq_f32(a2, v, vld1q_f32(w2 + d));
                a3 = vfmaq_f32(a3, v, vld1q_f32(w3 + d));
            }
            if (tail > 0) {
                const float32x4_t v = vldrwq_z_f32(x + whole, tail_lanes);
                a0 = vfmaq_m_f32(a0, v, vldrwq_z_f32(w0 + whole, tail_lanes), tail_lanes);
                a1 = vfmaq_m_f32(a1, v, vldrwq_z_f32(w1 + whole, tail_lanes), tail_lanes);
                a2 = vfmaq_m_f32(a2, v, vldrwq_z_f32(w2 + whole, tail_lanes), tail_lanes);
                a3 = vfmaq_m_f32(a3, v, vldrwq_z_f32(w3 + whole, tail_lanes), tail_lanes);
            }
            y[row] = finish(p, bias, row, a0);
            y[row + 1] = finish(p, bias, row + 1, a1);
            y[row + 2] = finish(p, bias, row + 2, a2);
            y[row + 3] = finish(p, bias, row + 3, a3);
        }
        for (; row < p->output_depth; row++) {
            const float *w = weights + row * depth;
            float32x4_t acc = vdupq_n_f32(0.0f);
            for (int32_t d = 0; d < whole; d += 4) {
                acc = vfmaq_f32(acc, vld1q_f32(x + d), vld1q_f32(w + d));
            }
            if (tail > 0) {
                acc = vfmaq_m_f32(acc, vldrwq_z_f32(x + whole, tail_lanes),
                                  vldrwq_z_f32(w + whole, tail_lanes), tail_lanes);
            }
            y[row] = finish(p, bias, row, acc);
        }
    }
}

#else
typedef int mb_fully_connected_f32_mve_unused;
#endif
