#include "microbuild/kernels/activations_f32.h"

#include <math.h>

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

/* The row's maximum from -FLT_MAX (numeric_limits::lowest), by std::max(max, x). */
static float row_max(const float *x, int32_t depth)
{
    float max = -FLT_MAX;
    for (int32_t c = 0; c < depth; c++) {
        max = max < x[c] ? x[c] : max;
    }
    return max;
}

void mb_softmax_f32(const float *input, float *output, int32_t rows, int32_t depth, float beta)
{
    for (int32_t r = 0; r < rows; r++) {
        const float *x = input + r * depth;
        float *y = output + r * depth;
        const float max = row_max(x, depth);
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

void mb_leaky_relu_f32(const float *input, float *output, int32_t size, float alpha)
{
    /* alpha may be above 1 or below 0, so this is no max(x, x * alpha). */
    for (int32_t i = 0; i < size; i++) {
        output[i] = input[i] > 0.0f ? input[i] : input[i] * alpha;
    }
}

void mb_log_softmax_f32(const float *input, float *output, int32_t rows, int32_t depth)
{
    for (int32_t r = 0; r < rows; r++) {
        const float *x = input + r * depth;
        float *y = output + r * depth;
        const float max = row_max(x, depth);
        float sum = 0.0f;
        for (int32_t c = 0; c < depth; c++) {
            sum += expf(x[c] - max);
        }
        const float log_sum = logf(sum);
        for (int32_t c = 0; c < depth; c++) {
            y[c] = x[c] - max - log_sum;
        }
    }
}
