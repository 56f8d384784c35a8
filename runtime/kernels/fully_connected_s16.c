#include <stddef.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/quant.h"

/* 16x8 FULLY_CONNECTED: int16 input and output (zero point 0), int8 weights, int64 bias. TFLM sums
 * in int64 and requantizes with the int64 form of MultiplyByQuantizedMultiplier. */
void mb_fully_connected_s16(const mb_fully_connected_s16_params *p, const int16_t *input,
                            const int8_t *weights, const int64_t *bias, int16_t *output)
{
    for (int32_t b = 0; b < p->batches; b++) {
        const int16_t *x = input + b * p->input_depth;
        for (int32_t o = 0; o < p->output_depth; o++) {
            const int8_t *w = weights + o * p->input_depth;
            int64_t acc = 0;
            for (int32_t d = 0; d < p->input_depth; d++) {
                acc += (int32_t)w[d] * (int32_t)x[d];
            }
            if (bias != NULL) {
                acc += bias[o];
            }
            const int32_t m = p->output_multipliers ? p->output_multipliers[o] : p->output_multiplier;
            const int32_t s = p->output_shifts ? p->output_shifts[o] : p->output_shift;
            const int32_t y = mb_mul_by_quantized_multiplier_s64(acc, m, (int)s);
            output[b * p->output_depth + o] = (int16_t)mb_clamp_i32(y, p->activation_min,
                                                                    p->activation_max);
        }
    }
}
