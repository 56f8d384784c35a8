#include "microbuild/kernels/lstm_f32.h"

#include <math.h>
#include <stddef.h>

#include "microbuild/kernels/activations_f32.h"
#include "microbuild/kernels/lstm.h"

/* The gates' pre-activations of one time step, two units at a time: for each of the 4 gates and
 * both units, FC(x) (from 0, over d in order, + the gate's bias) and FC(h) (+ 0.0f: TFLM passes
 * the recurrent layer no bias), each clamped to +-FLT_MAX as FullyConnected's float kernel, then
 * added (lstm_eval.h's CalculateLstmGate). Every sum runs in TFLM's order; the 8 running sums
 * side by side share each x[d] / h[d] load. gates[g * units + u] receives gate g of unit u. */
static void gate_sums(const mb_lstm_f32_params *p, const float *x, const float *h,
                      const float *const weights[8], const float *const bias[4], float *gates)
{
    const int32_t units = p->units;
    const int32_t depth = p->input_size;
    int32_t u = 0;
    for (; u + 2 <= units; u += 2) {
        float in[8], rec[8];
        /* Input layer: gate g's rows u (in[g]) and u + 1 (in[4 + g]). */
        const float *a0 = weights[0] + u * depth, *a1 = weights[1] + u * depth;
        const float *a2 = weights[2] + u * depth, *a3 = weights[3] + u * depth;
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f;
        for (int32_t d = 0; d < depth; d++) {
            const float v = x[d];
            s0 = MB_F32_MULADD(s0, v, a0[d]);
            s1 = MB_F32_MULADD(s1, v, a1[d]);
            s2 = MB_F32_MULADD(s2, v, a2[d]);
            s3 = MB_F32_MULADD(s3, v, a3[d]);
            t0 = MB_F32_MULADD(t0, v, a0[depth + d]);
            t1 = MB_F32_MULADD(t1, v, a1[depth + d]);
            t2 = MB_F32_MULADD(t2, v, a2[depth + d]);
            t3 = MB_F32_MULADD(t3, v, a3[depth + d]);
        }
        in[0] = s0, in[1] = s1, in[2] = s2, in[3] = s3;
        in[4] = t0, in[5] = t1, in[6] = t2, in[7] = t3;
        /* Recurrent layer, the same way over h. */
        const float *r0 = weights[4] + u * units, *r1 = weights[5] + u * units;
        const float *r2 = weights[6] + u * units, *r3 = weights[7] + u * units;
        s0 = s1 = s2 = s3 = t0 = t1 = t2 = t3 = 0.0f;
        for (int32_t d = 0; d < units; d++) {
            const float v = h[d];
            s0 = MB_F32_MULADD(s0, v, r0[d]);
            s1 = MB_F32_MULADD(s1, v, r1[d]);
            s2 = MB_F32_MULADD(s2, v, r2[d]);
            s3 = MB_F32_MULADD(s3, v, r3[d]);
            t0 = MB_F32_MULADD(t0, v, r0[units + d]);
            t1 = MB_F32_MULADD(t1, v, r1[units + d]);
            t2 = MB_F32_MULADD(t2, v, r2[units + d]);
            t3 = MB_F32_MULADD(t3, v, r3[units + d]);
        }
        rec[0] = s0, rec[1] = s1, rec[2] = s2, rec[3] = s3;
        rec[4] = t0, rec[5] = t1, rec[6] = t2, rec[7] = t3;
        for (int32_t k = 0; k < 8; k++) {
            const int32_t g = k & 3;
            const int32_t unit = u + (k >> 2);
            const float from_x = mb_f32_clamp(in[k] + bias[g][unit], -FLT_MAX, FLT_MAX);
            const float from_h = mb_f32_clamp(rec[k] + 0.0f, -FLT_MAX, FLT_MAX);
            gates[g * units + unit] = from_x + from_h;
        }
    }
    for (; u < units; u++) { /* an odd last unit, one gate at a time */
        for (int32_t g = 0; g < 4; g++) {
            const float *w = weights[g] + u * depth;
            const float *r = weights[4 + g] + u * units;
            float sx = 0.0f, sh = 0.0f;
            for (int32_t d = 0; d < depth; d++) {
                sx = MB_F32_MULADD(sx, x[d], w[d]);
            }
            for (int32_t d = 0; d < units; d++) {
                sh = MB_F32_MULADD(sh, h[d], r[d]);
            }
            gates[g * units + u] = mb_f32_clamp(sx + bias[g][u], -FLT_MAX, FLT_MAX)
                                   + mb_f32_clamp(sh + 0.0f, -FLT_MAX, FLT_MAX);
        }
    }
}

void mb_lstm_f32(const mb_lstm_f32_params *p, const float *input, const float *const weights[8],
                 const float *const bias[4], float *hidden, float *cell, float *output,
                 float *scratch)
{
    const int32_t units = p->units;
    float *const forget = scratch + MB_LSTM_FORGET * units;
    float *const input_gate = scratch + MB_LSTM_INPUT * units;
    float *const cell_gate = scratch + MB_LSTM_CELL * units;
    float *const output_gate = scratch + MB_LSTM_OUTPUT * units;
    for (int32_t b = 0; b < p->batches; b++) {
        float *h = hidden + b * units;
        float *c = cell + b * units;
        for (int32_t t = 0; t < p->time_steps; t++) {
            const int32_t row = p->time_major ? t * p->batches + b : b * p->time_steps + t;
            const float *x = input + row * p->input_size;
            /* All four gates read the previous step's h, so TFLM computing the output gate
             * after the cell update gives the same values. */
            gate_sums(p, x, h, weights, bias, scratch);
            mb_logistic_f32(forget, forget, units);
            mb_logistic_f32(input_gate, input_gate, units);
            if (p->cell_gate_tanh) {
                mb_tanh_f32(cell_gate, cell_gate, units);
            } else {
                mb_logistic_f32(cell_gate, cell_gate, units);
            }
            mb_logistic_f32(output_gate, output_gate, units);
            /* UpdateLstmCell: two clamped products, then their sum, then the clip. */
            for (int32_t u = 0; u < units; u++) {
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
            /* The whole input row of this step has been read: the output row may overlap it
             * (microbuild/compiler/f32/lstm.py's overlap). */
            float *out = output + row * units;
            for (int32_t u = 0; u < units; u++) {
                h[u] = mb_f32_clamp(tanhf(c[u]) * output_gate[u], -FLT_MAX, FLT_MAX);
                out[u] = h[u];
            }
        }
    }
}
