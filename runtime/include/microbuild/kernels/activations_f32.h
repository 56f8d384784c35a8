/* Float32 activations, bit-exact with TFLM's reference kernels: LOGISTIC (reference_ops::
 * Logistic: 1 when x > 16.619047, expf(x) when x < -9, else 1 / (1 + expf(-x))), TANH (tanhf),
 * RELU family (min/max against the range, as ActivationFunctionWithMinMax), and SOFTMAX
 * (reference_ops::Softmax on float: per row the maximum, then expf((x - max) * beta) summed in
 * order, then each divided by the sum), LEAKY_RELU (x > 0 ? x : x * alpha) and LOG_SOFTMAX
 * (reference_ops::LogSoftmax on float: per row the maximum, expf(x - max) summed in order, then
 * x - max - logf(sum)). */
#ifndef MICROBUILD_KERNELS_ACTIVATIONS_F32_H
#define MICROBUILD_KERNELS_ACTIVATIONS_F32_H

#include <math.h>
#include <stdint.h>

#include "microbuild/kernels/f32.h"

/* One LOGISTIC value, inline so that the LSTM's gates pay no call besides expf's. TFLM's
 * cut-offs: above the upper one the result rounds to 1; below the lower one 1 + expf(-x) would
 * lose expf(x) entirely, and expf(x) is the limit. */
static inline float mb_logistic_f32_one(float x)
{
    if (x > 16.619047164916992188f) {
        return 1.0f;
    }
    if (x < -9.0f) {
        return expf(x);
    }
    return 1.0f / (1.0f + expf(-x));
}

void mb_logistic_f32(const float *input, float *output, int32_t size);
void mb_tanh_f32(const float *input, float *output, int32_t size);
/* RELU, RELU6, RELU_N1_TO_1: lo <= x <= hi. */
void mb_relu_f32(const float *input, float *output, int32_t size, float lo, float hi);
void mb_softmax_f32(const float *input, float *output, int32_t rows, int32_t depth, float beta);
void mb_leaky_relu_f32(const float *input, float *output, int32_t size, float alpha);
void mb_log_softmax_f32(const float *input, float *output, int32_t rows, int32_t depth);

#endif
