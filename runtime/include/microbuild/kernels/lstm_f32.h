/* UNIDIRECTIONAL_SEQUENCE_LSTM on float32, bit-exact with TFLM's float kernel (lstm_eval.h's
 * EvalLstm<float, float, float, float>), step by step in TFLM's order:
 *
 *   for each gate in forget, input, cell (then output, after the cell update):
 *     g = FC(x, W_gate, bias_gate) + FC(h, R_gate, no bias)     (each FC as fully_connected_f32.h,
 *                                                                 clamped to +-FLT_MAX)
 *     g = sigmoid(g) (TFLM's Logistic: 1 / (1 + expf(-g)), expf(g) below -9, 1 above 16.619...)
 *         or tanhf(g) for the cell gate
 *   cell = clamp(forget * cell) + clamp(input * cell_gate), then clipped to +-cell_clip if > 0
 *   h = clamp(tanhf(cell) * output_gate); the output at this step is h.
 *
 * Hidden and cell states are the model's variable tensors: they carry over between invocations. */
#ifndef MICROBUILD_KERNELS_LSTM_F32_H
#define MICROBUILD_KERNELS_LSTM_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

typedef struct {
    int32_t batches;
    int32_t time_steps;
    int32_t input_size;
    int32_t units;
    int32_t time_major;     /* 1: input/output are [time][batch][...], else [batch][time][...] */
    int32_t cell_gate_tanh; /* 1: tanh on the cell gate (the model's activation), 0: sigmoid */
    float cell_clip;        /* 0: no clipping */
} mb_lstm_f32_params;

/* weights: the input layers' [units][input_size] then the recurrent layers' [units][units], gates
 * in MB_LSTM_* order (forget, input, cell, output); bias: the 4 gates' units values each, same
 * order. scratch: units floats (the new hidden state while a step still reads the old one). */
void mb_lstm_f32(const mb_lstm_f32_params *params, const float *input,
                 const float *const weights[8], const float *const bias[4], float *hidden,
                 float *cell, float *output, float *scratch);

#endif
