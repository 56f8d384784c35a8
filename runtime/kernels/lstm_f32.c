#include "microbuild/kernels/lstm_f32.h"

#include <math.h>
#include <stddef.h>

#include "microbuild/kernels/activations_f32.h"
#include "microbuild/kernels/lstm.h"

/* sums[g] and sums[4 + g]: rows u and u + 1 of gate g's layer (rows[g] points at row u, each row
 * n long) times v, from 0 over d in order; the 8 running sums side by side share each v[d]. */
static void two_rows_of_four_gates(const float *v, int32_t n, const float *const rows[4],
                                   float sums[8])
{
    const float *a0 = rows[0], *a1 = rows[1], *a2 = rows[2], *a3 = rows[3];
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f;
    for (int32_t d = 0; d < n; d++) {
        const float x = v[d];
        s0 = MB_F32_MULADD(s0, x, a0[d]);
        s1 = MB_F32_MULADD(s1, x, a1[d]);
        s2 = MB_F32_MULADD(s2, x, a2[d]);
        s3 = MB_F32_MULADD(s3, x, a3[d]);
        t0 = MB_F32_MULADD(t0, x, a0[n + d]);
        t1 = MB_F32_MULADD(t1, x, a1[n + d]);
        t2 = MB_F32_MULADD(t2, x, a2[n + d]);
        t3 = MB_F32_MULADD(t3, x, a3[n + d]);
    }
    sums[0] = s0, sums[1] = s1, sums[2] = s2, sums[3] = s3;
    sums[4] = t0, sums[5] = t1, sums[6] = t2, sums[7] = t3;
}

/* The gates' pre-activations of one time step, two units at a time: for each of the 4 gates and
 * both units, FC(x) (+ the gate's bias) and FC(h) (+ 0.0f: TFLM passes the recurrent layer no
 * bias), each sum from 0 in TFLM's order and clamped to +-FLT_MAX as FullyConnected's float
 * kernel, then added (lstm_eval.h's CalculateLstmGate). gates[g * units + u] receives gate g
 * of unit u. */
static void gate_sums(const mb_lstm_f32_params *p, const float *x, const float *h,
                      const float *const weights[8], const float *const bias[4], float *gates)
{
    const int32_t units = p->units;
    const int32_t depth = p->input_size;
    int32_t u = 0;
    for (; u + 2 <= units; u += 2) {
        const float *const input_rows[4] = {weights[0] + u * depth, weights[1] + u * depth,
                                            weights[2] + u * depth, weights[3] + u * depth};
        const float *const recurrent_rows[4] = {weights[4] + u * units, weights[5] + u * units,
                                                weights[6] + u * units, weights[7] + u * units};
        float in[8], rec[8];
        two_rows_of_four_gates(x, depth, input_rows, in);
        two_rows_of_four_gates(h, units, recurrent_rows, rec);
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
