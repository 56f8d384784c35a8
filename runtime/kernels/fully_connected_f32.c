#include "microbuild/kernels/fully_connected_f32.h"

#include <stddef.h>

/* Four weight rows per pass share each input load; every row's sum still runs over d in order,
 * so each output is the reference's sum, bit for bit. */
void mb_fully_connected_f32(const mb_fully_connected_f32_params *p, const float *input,
                            const float *weights, const float *bias, float *output)
{
    const int32_t depth = p->input_depth;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *x = input + b * depth;
        float *y = output + b * p->output_depth;
        int32_t row = 0;
        for (; row + 4 <= p->output_depth; row += 4) {
            const float *w0 = weights + row * depth;
            const float *w1 = w0 + depth;
            const float *w2 = w1 + depth;
            const float *w3 = w2 + depth;
            float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
            for (int32_t d = 0; d < depth; d++) {
                const float v = x[d];
                s0 = MB_F32_MULADD(s0, v, w0[d]);
                s1 = MB_F32_MULADD(s1, v, w1[d]);
                s2 = MB_F32_MULADD(s2, v, w2[d]);
                s3 = MB_F32_MULADD(s3, v, w3[d]);
            }
            const float sums[4] = {s0, s1, s2, s3};
            for (int32_t k = 0; k < 4; k++) {
                const float bias_value = bias != NULL ? bias[row + k] : 0.0f;
                y[row + k] = mb_f32_clamp(sums[k] + bias_value, p->activation_min,
                                          p->activation_max);
            }
        }
        for (; row < p->output_depth; row++) {
            const float *w = weights + row * depth;
            float sum = 0.0f;
            for (int32_t d = 0; d < depth; d++) {
                sum = MB_F32_MULADD(sum, x[d], w[d]);
            }
            const float bias_value = bias != NULL ? bias[row] : 0.0f;
            y[row] = mb_f32_clamp(sum + bias_value, p->activation_min, p->activation_max);
        }
    }
}
