#include "microbuild/kernels/lstm_f32.h"

#include <math.h>
#include <stddef.h>

#include "microbuild/kernels/activations_f32.h"
#include "microbuild/kernels/fully_connected_f32.h"
#include "microbuild/kernels/lstm.h"

/* One gate for one batch row: FC(x) with the gate's bias, FC(h) without one (TFLM passes no
 * recurrent bias: its sum gets + 0.0f), added, squashed (lstm_eval.h's CalculateLstmGate). */
static void gate(const mb_lstm_f32_params *p, int32_t g, const float *x, const float *h,
                 const float *const weights[8], const float *const bias[4], float *out,
                 float *recurrent, int32_t squash_tanh)
{
    mb_fully_connected_f32_params fc = {1, p->input_size, p->units, -FLT_MAX, FLT_MAX};
    mb_fully_connected_f32(&fc, x, weights[g], bias[g], out);
    fc.input_depth = p->units;
    mb_fully_connected_f32(&fc, h, weights[4 + g], NULL, recurrent);
    for (int32_t u = 0; u < p->units; u++) {
        out[u] = out[u] + recurrent[u];
    }
    if (squash_tanh) {
        mb_tanh_f32(out, out, p->units);
    } else {
        mb_logistic_f32(out, out, p->units);
    }
}

void mb_lstm_f32(const mb_lstm_f32_params *p, const float *input, const float *const weights[8],
                 const float *const bias[4], float *hidden, float *cell, float *output,
                 float *scratch)
{
    float *const forget = scratch;
    float *const input_gate = forget + p->units;
    float *const cell_gate = input_gate + p->units;
    float *const recurrent = cell_gate + p->units;
    for (int32_t b = 0; b < p->batches; b++) {
        float *h = hidden + b * p->units;
        float *c = cell + b * p->units;
        for (int32_t t = 0; t < p->time_steps; t++) {
            const int32_t row = p->time_major ? t * p->batches + b : b * p->time_steps + t;
            const float *x = input + row * p->input_size;
            gate(p, MB_LSTM_FORGET, x, h, weights, bias, forget, recurrent, 0);
            gate(p, MB_LSTM_INPUT, x, h, weights, bias, input_gate, recurrent, 0);
            gate(p, MB_LSTM_CELL, x, h, weights, bias, cell_gate, recurrent, p->cell_gate_tanh);
            /* UpdateLstmCell: two clamped products, then their sum, then the clip. */
            for (int32_t u = 0; u < p->units; u++) {
                const float kept = mb_f32_clamp(forget[u] * c[u], -FLT_MAX, FLT_MAX);
                const float added = mb_f32_clamp(input_gate[u] * cell_gate[u], -FLT_MAX, FLT_MAX);
                float v = kept + added;
                if (p->cell_clip > 0.0f) {
                    /* std::max(std::min(clip, v), -clip) */
                    const float upper = v < p->cell_clip ? v : p->cell_clip;
                    v = upper < -p->cell_clip ? -p->cell_clip : upper;
                }
                c[u] = v;
            }
            /* The output gate reads the hidden state of the previous step. */
            float *const output_gate = input_gate;
            gate(p, MB_LSTM_OUTPUT, x, h, weights, bias, output_gate, recurrent, 0);
            float *out = output + row * p->units;
            for (int32_t u = 0; u < p->units; u++) {
                h[u] = mb_f32_clamp(tanhf(c[u]) * output_gate[u], -FLT_MAX, FLT_MAX);
                out[u] = h[u];
            }
        }
    }
}
