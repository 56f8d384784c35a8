#include "microbuild/kernels/activations_f32.h"

#include <math.h>

float mb_logistic_f32_one(float x)
{
    /* TFLM's cut-offs: above, the result rounds to 1; below, 1 + expf(-x) would overflow its
     * precision, and expf(x) is the limit. */
    const float cutoff_upper = 16.619047164916992188f;
    const float cutoff_lower = -9.0f;
    if (x > cutoff_upper) {
        return 1.0f;
    }
    if (x < cutoff_lower) {
        return expf(x);
    }
    return 1.0f / (1.0f + expf(-x));
}

void mb_logistic_f32(const float *input, float *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = mb_logistic_f32_one(input[i]);
    }
}

void mb_tanh_f32(const float *input, float *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = tanhf(input[i]);
    }
}

void mb_relu_f32(const float *input, float *output, int32_t size, float lo, float hi)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = mb_f32_clamp(input[i], lo, hi);
    }
}

void mb_softmax_f32(const float *input, float *output, int32_t rows, int32_t depth, float beta)
{
    for (int32_t r = 0; r < rows; r++) {
        const float *x = input + r * depth;
        float *y = output + r * depth;
        float max = -FLT_MAX;
        for (int32_t c = 0; c < depth; c++) {
            max = max < x[c] ? x[c] : max; /* std::max(max, x) */
        }
        float sum = 0.0f;
        for (int32_t c = 0; c < depth; c++) {
            const float e = expf((x[c] - max) * beta);
            y[c] = e;
            sum += e;
        }
        for (int32_t c = 0; c < depth; c++) {
            y[c] = y[c] / sum;
        }
    }
}
