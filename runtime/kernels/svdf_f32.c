#include "microbuild/kernels/svdf_f32.h"

/* TFLM's ActivationValFloat, with its TfLiteMax / TfLiteMin (a > b ? a : b, a < b ? a : b). */
static float activation(int32_t kind, float a)
{
    switch (kind) {
    case MB_SVDF_F32_RELU:
        return 0.0f > a ? 0.0f : a;
    case MB_SVDF_F32_RELU_N1_TO_1: {
        const float m = a < 1.0f ? a : 1.0f;
        return -1.0f > m ? -1.0f : m;
    }
    case MB_SVDF_F32_RELU6: {
        const float m = a < 6.0f ? a : 6.0f;
        return 0.0f > m ? 0.0f : m;
    }
    default:
        return a;
    }
}

void mb_svdf_f32(const mb_svdf_f32_params *p, const float *input, const float *weights_feature,
                 const float *weights_time, const float *bias, float *state, float *output,
                 float *scratch)
{
    const int32_t filters = p->filters;
    const int32_t memory = p->memory;
    const int32_t state_size = p->batches * filters * memory;
    for (int32_t i = 0; i + 1 < state_size; i++) {
        state[i] = state[i + 1];
    }
    for (int32_t b = 0; b < p->batches; b++) {
        const float *x = input + b * p->input_size;
        for (int32_t f = 0; f < filters; f++) {
            const float *w = weights_feature + f * p->input_size;
            float dot = 0.0f;
            for (int32_t k = 0; k < p->input_size; k++) {
                dot = MB_F32_MULADD(dot, w[k], x[k]);
            }
            state[(b * filters + f) * memory + memory - 1] = dot;
        }
    }
    for (int32_t b = 0; b < p->batches; b++) {
        for (int32_t f = 0; f < filters; f++) {
            const float *w = weights_time + f * memory;
            const float *s = state + (b * filters + f) * memory;
            float sum = 0.0f;
            for (int32_t j = 0; j < memory; j++) {
                sum = MB_F32_MULADD(sum, w[j], s[j]);
            }
            scratch[b * filters + f] = sum;
        }
    }
    for (int32_t b = 0; b < p->batches; b++) {
        const float *sums = scratch + b * filters;
        float *out = output + b * p->units;
        for (int32_t u = 0; u < p->units; u++) {
            float v = bias != 0 ? bias[u] : 0.0f;
            for (int32_t r = 0; r < p->rank; r++) {
                v += *sums++;
            }
            out[u] = activation(p->activation, v);
        }
    }
}
