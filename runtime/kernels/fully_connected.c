#include "microbuild/kernels/fully_connected.h"

#include <stddef.h>

#include "microbuild/quant.h"

static int32_t dot_s8(const int8_t *w, const int8_t *x, int32_t n, int32_t acc)
{
    int32_t d = 0;
    /* Four products per iteration: fewer loop branches on cores without a loop buffer. */
    for (; d + 4 <= n; d += 4) {
        acc += (int32_t)w[d] * x[d] + (int32_t)w[d + 1] * x[d + 1] + (int32_t)w[d + 2] * x[d + 2] +
               (int32_t)w[d + 3] * x[d + 3];
    }
    for (; d < n; d++) {
        acc += (int32_t)w[d] * x[d];
    }
    return acc;
}

void mb_fully_connected_s8(const mb_fully_connected_s8_params *params, const int8_t *input,
                           const int8_t *weights, const int32_t *bias, int8_t *output)
{
    const int32_t depth = params->input_depth;
    const int32_t out_depth = params->output_depth;
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x = input + b * depth;
        int8_t *y = output + b * out_depth;
        const int8_t *w = weights;
        for (int32_t c = 0; c < out_depth; c++, w += depth) {
            const int32_t acc = dot_s8(w, x, depth, bias[c]);
            int32_t multiplier = params->output_multiplier;
            int32_t shift = params->output_shift;
            if (params->output_multipliers != NULL) {
                multiplier = params->output_multipliers[c];
                shift = params->output_shifts[c];
            }
            const int32_t out = mb_mul_by_quantized_multiplier(acc, multiplier, (int)shift) +
                                params->output_offset;
            y[c] = (int8_t)mb_clamp_i32(out, params->activation_min, params->activation_max);
        }
    }
}
