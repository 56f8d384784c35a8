#include "microbuild/kernels/lstm_f32.h"

#include <math.h>
#include <stddef.h>

#include "microbuild/kernels/activations_f32.h"
#include "microbuild/kernels/dot_f32.h"
#include "microbuild/kernels/lstm.h"

/* A float that is neither infinite nor NaN. */
static inline int is_finite(float v)
{
    return fabsf(v) <= FLT_MAX;
}

/* clamp(a) + clamp(b) with TFLM's +-FLT_MAX clamps (each FullyConnected's and each product's of
 * the cell update). When a + b is finite, a and b were (an infinity or a NaN in either makes the
 * sum one too), the clamps did nothing and a + b is the answer: two additions and a test instead
 * of two clamps. */
static inline float sum_of_clamped(float a, float b)
{
    const float sum = a + b;
    if (is_finite(sum)) {
        return sum;
    }
    return mb_f32_clamp(a, -FLT_MAX, FLT_MAX) + mb_f32_clamp(b, -FLT_MAX, FLT_MAX);
}

/* One time step, unit by unit: the unit's four gates (forget, input, cell, output: row u of each
 * gate's layers) are four sums side by side over x and four over h (dot_f32.h, each from 0 in
 * TFLM's order), and everything after them is per unit. TFLM computes gate by gate over all
 * units, but every value depends only on its own unit's gates and the previous h, so the
 * results are the same. The new h goes to new_h: the other units still read the previous h. */
static void step(const mb_lstm_f32_params *p, const float *x, const float *h, float *c,
                 const float *const weights[8], const float *const bias[4], float *new_h)
{
    const int32_t units = p->units;
    const int32_t depth = p->input_size;
    for (int32_t u = 0; u < units; u++) {
        const float *const input_rows[4] = {weights[0] + u * depth, weights[1] + u * depth,
                                            weights[2] + u * depth, weights[3] + u * depth};
        const float *const recurrent_rows[4] = {weights[4] + u * units, weights[5] + u * units,
                                                weights[6] + u * units, weights[7] + u * units};
        float from_x[4], from_h[4], gate[4];
        mb_f32_dot4(x, depth, input_rows, from_x);
        mb_f32_dot4(h, units, recurrent_rows, from_h);
        /* CalculateLstmGate: FC(x) + bias and FC(h) + 0.0f (TFLM passes the recurrent layer no
         * bias, and the + 0.0f turns a -0.0f sum into +0.0f), each clamped, then added. */
        for (int32_t g = 0; g < 4; g++) {
            gate[g] = sum_of_clamped(from_x[g] + bias[g][u], from_h[g] + 0.0f);
        }
        const float forget = mb_logistic_f32_one(gate[MB_LSTM_FORGET]);
        const float input_gate = mb_logistic_f32_one(gate[MB_LSTM_INPUT]);
        const float cell_gate = p->cell_gate_tanh ? tanhf(gate[MB_LSTM_CELL])
                                                  : mb_logistic_f32_one(gate[MB_LSTM_CELL]);
        const float output_gate = mb_logistic_f32_one(gate[MB_LSTM_OUTPUT]);
        /* UpdateLstmCell: two clamped products, then their sum, then the clip. */
        float v = sum_of_clamped(forget * c[u], input_gate * cell_gate);
        if (p->cell_clip > 0.0f) {
            /* std::max(std::min(clip, v), -clip) */
            const float upper = v < p->cell_clip ? v : p->cell_clip;
            v = upper < -p->cell_clip ? -p->cell_clip : upper;
        }
        c[u] = v;
        /* tanhf is within [-1, 1] and the output gate within [0, 1] (or NaN), so TFLM's
         * +-FLT_MAX clamp of this product never changes it. */
        new_h[u] = tanhf(v) * output_gate;
    }
}

void mb_lstm_f32(const mb_lstm_f32_params *p, const float *input, const float *const weights[8],
                 const float *const bias[4], float *hidden, float *cell, float *output,
                 float *scratch)
{
    const int32_t units = p->units;
    for (int32_t b = 0; b < p->batches; b++) {
        float *h = hidden + b * units;
        float *c = cell + b * units;
        for (int32_t t = 0; t < p->time_steps; t++) {
            const int32_t row = p->time_major ? t * p->batches + b : b * p->time_steps + t;
            step(p, input + row * p->input_size, h, c, weights, bias, scratch);
            /* The whole input row of this step has been read: the output row may overlap it
             * (microbuild/compiler/f32/lstm.py's overlap). */
            float *out = output + row * units;
            for (int32_t u = 0; u < units; u++) {
                h[u] = scratch[u];
                out[u] = scratch[u];
            }
        }
    }
}
