#include "microbuild/kernels/fully_connected.h"

#include <stddef.h>

#include "microbuild/quant.h"

/* Products are summed in MB_FC_LANES independent int32 lanes over blocks of MB_FC_LANES inputs:
 * the block loop has a constant trip count and no cross-lane dependency, so an optimizing
 * compiler can vectorize it without a runtime epilogue (GCC does at -O2). Integer addition is
 * associative, so the result equals TFLM's sequential sum. */
#define MB_FC_LANES 16

/* Two weight rows against one input row: every input load feeds two products. */
static void dot2_s8(const int8_t *w0, const int8_t *w1, const int8_t *x, int32_t n, int32_t *acc0,
                    int32_t *acc1)
{
    int32_t lanes0[MB_FC_LANES];
    int32_t lanes1[MB_FC_LANES];
    for (int32_t j = 0; j < MB_FC_LANES; j++) {
        lanes0[j] = 0;
        lanes1[j] = 0;
    }
    int32_t d = 0;
    for (; d + MB_FC_LANES <= n; d += MB_FC_LANES) {
        for (int32_t j = 0; j < MB_FC_LANES; j++) {
            const int32_t xv = x[d + j];
            lanes0[j] += (int32_t)w0[d + j] * xv;
            lanes1[j] += (int32_t)w1[d + j] * xv;
        }
    }
    int32_t s0 = *acc0;
    int32_t s1 = *acc1;
    for (int32_t j = 0; j < MB_FC_LANES; j++) {
        s0 += lanes0[j];
        s1 += lanes1[j];
    }
    for (; d < n; d++) {
        s0 += (int32_t)w0[d] * x[d];
        s1 += (int32_t)w1[d] * x[d];
    }
    *acc0 = s0;
    *acc1 = s1;
}

static int32_t dot_s8(const int8_t *w, const int8_t *x, int32_t n, int32_t acc)
{
    int32_t lanes[MB_FC_LANES];
    for (int32_t j = 0; j < MB_FC_LANES; j++) {
        lanes[j] = 0;
    }
    int32_t d = 0;
    for (; d + MB_FC_LANES <= n; d += MB_FC_LANES) {
        for (int32_t j = 0; j < MB_FC_LANES; j++) {
            lanes[j] += (int32_t)w[d + j] * x[d + j];
        }
    }
    for (int32_t j = 0; j < MB_FC_LANES; j++) {
        acc += lanes[j];
    }
    for (; d < n; d++) {
        acc += (int32_t)w[d] * x[d];
    }
    return acc;
}

static int8_t requantize(const mb_fully_connected_s8_params *params, int32_t c, int32_t acc)
{
    int32_t multiplier = params->output_multiplier;
    int32_t shift = params->output_shift;
    if (params->output_multipliers != NULL) {
        multiplier = params->output_multipliers[c];
        shift = params->output_shifts[c];
    }
    const int32_t out = mb_mul_by_quantized_multiplier(acc, multiplier, (int)shift) +
                        params->output_offset;
    return (int8_t)mb_clamp_i32(out, params->activation_min, params->activation_max);
}

void mb_fully_connected_s8(const mb_fully_connected_s8_params *params, const int8_t *input,
                           const int8_t *weights, const int32_t *bias, int8_t *output)
{
    const int32_t depth = params->input_depth;
    const int32_t out_depth = params->output_depth;
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x = input + b * depth;
        int8_t *y = output + b * out_depth;
        int32_t c = 0;
        for (; c + 2 <= out_depth; c += 2) {
            const int8_t *w = weights + c * depth;
            int32_t acc0 = bias[c];
            int32_t acc1 = bias[c + 1];
            dot2_s8(w, w + depth, x, depth, &acc0, &acc1);
            y[c] = requantize(params, c, acc0);
            y[c + 1] = requantize(params, c + 1, acc1);
        }
        for (; c < out_depth; c++) {
            y[c] = requantize(params, c, dot_s8(weights + c * depth, x, depth, bias[c]));
        }
    }
}
