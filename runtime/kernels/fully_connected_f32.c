#include "microbuild/kernels/fully_connected_f32.h"

#include <stddef.h>

#include "microbuild/kernels/dot_f32.h"

/* TFLM's epilogue of one output: the bias added to the whole sum, then the activation clamp. */
static inline float finish(float sum, const float *bias, int32_t row, float lo, float hi)
{
    return mb_f32_clamp(sum + (bias != NULL ? bias[row] : 0.0f), lo, hi);
}

/* Four weight rows per pass share each input load (dot_f32.h); every row's sum still runs over
 * d in order, so each output is the reference's sum, bit for bit. */
void mb_fully_connected_f32(const mb_fully_connected_f32_params *p, const float *input,
                            const float *weights, const float *bias, float *output)
{
    const int32_t depth = p->input_depth;
    const float lo = p->activation_min, hi = p->activation_max;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *x = input + b * depth;
        float *y = output + b * p->output_depth;
        int32_t row = 0;
        for (; row + 4 <= p->output_depth; row += 4) {
            const float *const rows[4] = {weights + row * depth, weights + (row + 1) * depth,
                                          weights + (row + 2) * depth,
                                          weights + (row + 3) * depth};
            float sums[4];
            mb_f32_dot4(x, depth, rows, sums);
            y[row] = finish(sums[0], bias, row, lo, hi);
            y[row + 1] = finish(sums[1], bias, row + 1, lo, hi);
            y[row + 2] = finish(sums[2], bias, row + 2, lo, hi);
            y[row + 3] = finish(sums[3], bias, row + 3, lo, hi);
        }
        for (; row < p->output_depth; row++) {
            y[row] = finish(mb_f32_dot1(x, depth, weights + row * depth), bias, row, lo, hi);
        }
    }
}
