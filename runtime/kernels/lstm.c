#include "microbuild/kernels/lstm.h"

#include "microbuild/kernels/sigmoid16.h"
#include "microbuild/quant.h"

static int16_t saturate_s16(int32_t v)
{
    return (int16_t)mb_clamp_i32(v, -32768, 32767);
}

/* acc[r] += row r of w . v for the n <= 4 rows of w (cols values each) from row 0: four rows
 * per pass share each load of v. The sums cannot overflow (the compiler checks the bound), so
 * their order does not change them. T: the vector's type, B: the accumulator type. */
#define MB_LSTM_DOT(NAME, T, B)                                                                  \
    static void NAME(const int8_t *w, int32_t cols, const T *v, int32_t n, B *acc)               \
    {                                                                                            \
        if (n == 4) {                                                                            \
            const int8_t *w0 = w, *w1 = w + cols, *w2 = w + 2 * cols, *w3 = w + 3 * cols;        \
            B a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];                                \
            for (int32_t c = 0; c < cols; c++) {                                                 \
                const int32_t x = v[c];                                                          \
                a0 += (B)((int32_t)w0[c] * x);                                                   \
                a1 += (B)((int32_t)w1[c] * x);                                                   \
                a2 += (B)((int32_t)w2[c] * x);                                                   \
                a3 += (B)((int32_t)w3[c] * x);                                                   \
            }                                                                                    \
            acc[0] = a0;                                                                         \
            acc[1] = a1;                                                                         \
            acc[2] = a2;                                                                         \
            acc[3] = a3;                                                                         \
            return;                                                                              \
        }                                                                                        \
        for (int32_t r = 0; r < n; r++) {                                                        \
            const int8_t *row = w + r * cols;                                                    \
            B a = acc[r];                                                                        \
            for (int32_t c = 0; c < cols; c++) {                                                 \
                a += (B)((int32_t)row[c] * (int32_t)v[c]);                                       \
            }                                                                                    \
            acc[r] = a;                                                                          \
        }                                                                                        \
    }

MB_LSTM_DOT(dot_s8, int8_t, int32_t)
MB_LSTM_DOT(dot_s16, int16_t, int64_t)

/* Both fully connected layers of one gate, each rescaled to Q3.12 and clamped to int16 as TFLM
 * does, their saturated sum in gate[], then the gate's activation. T is the activation type, B
 * the bias/accumulator type, DOT its row product, REQUANT the rescaling of an accumulator. */
#define MB_LSTM_GATE(T, B, DOT, REQUANT)                                                         \
    static void gate_##T(const mb_lstm_params *p, int32_t g, const T *x, const T *h,            \
                         const int8_t *const weights[8], const B *bias, int16_t *gate)           \
    {                                                                                            \
        const int32_t units = p->units, depth = p->input_size;                                  \
        const int8_t *w_in = weights[g], *w_rec = weights[4 + g];                               \
        const B *b_in = bias + g * units, *b_rec = bias + (4 + g) * units;                      \
        for (int32_t u = 0; u < units; u += 4) {                                                \
            const int32_t n = units - u < 4 ? units - u : 4;                                    \
            B acc_in[4], acc_rec[4];                                                             \
            for (int32_t k = 0; k < n; k++) {                                                    \
                acc_in[k] = b_in[u + k];                                                         \
                acc_rec[k] = b_rec[u + k];                                                       \
            }                                                                                    \
            DOT(w_in + u * depth, depth, x, n, acc_in);                                          \
            DOT(w_rec + u * units, units, h, n, acc_rec);                                        \
            for (int32_t k = 0; k < n; k++) {                                                    \
                const int16_t from_input = saturate_s16(                                         \
                    REQUANT(acc_in[k], p->input_multiplier[g], p->input_shift[g]));             \
                const int16_t from_hidden = saturate_s16(                                        \
                    REQUANT(acc_rec[k], p->recurrent_multiplier[g], p->recurrent_shift[g]));    \
                gate[u + k] = saturate_s16((int32_t)from_input + (int32_t)from_hidden);          \
            }                                                                                    \
        }                                                                                        \
        if (g == MB_LSTM_CELL) {                                                                 \
            /* Q3.12 input: TFLM's Tanh with cell_state_scale_power -12, i.e. multiplier 3. */    \
            mb_tanh_s16(3, 0, gate, gate, units);                                                \
        } else {                                                                                 \
            mb_logistic_s16(3, 0, gate, gate, units);                                            \
        }                                                                                        \
    }

#define MB_REQUANT_S32(acc, m, s) mb_mul_by_quantized_multiplier((acc), (m), (int)(s))
#define MB_REQUANT_S64(acc, m, s) mb_mul_by_quantized_multiplier_s64((acc), (m), (int)(s))

MB_LSTM_GATE(int8_t, int32_t, dot_s8, MB_REQUANT_S32)
MB_LSTM_GATE(int16_t, int64_t, dot_s16, MB_REQUANT_S64)

/* The cell state update of one batch row from its forget, input and cell gates: two int16
 * multiplications (each requantized and clamped as TFLM's Mul does), a saturating add, the clip. */
static void update_cell(const mb_lstm_params *p, const int16_t *forget, const int16_t *input_gate,
                        const int16_t *cell_gate, int16_t *cell)
{
    for (int32_t u = 0; u < p->units; u++) {
        const int16_t kept = saturate_s16(mb_mul_by_quantized_multiplier(
            (int32_t)forget[u] * (int32_t)cell[u], p->forget_multiplier, p->forget_shift));
        const int16_t added = saturate_s16(mb_mul_by_quantized_multiplier(
            (int32_t)input_gate[u] * (int32_t)cell_gate[u], p->update_multiplier,
            p->update_shift));
        int16_t c = saturate_s16((int32_t)kept + (int32_t)added);
        if (p->cell_clip > 0) {
            c = (int16_t)mb_clamp_i32(c, -p->cell_clip, p->cell_clip);
        }
        cell[u] = c;
    }
}

static int32_t hidden_value(const mb_lstm_params *p, int16_t tanh_cell, int16_t output_gate)
{
    return p->hidden_zero_point +
           mb_mul_by_quantized_multiplier((int32_t)tanh_cell * (int32_t)output_gate,
                                          p->hidden_multiplier, p->hidden_shift);
}

/* T: activation type, LO/HI: its range. Scratch: three gates of one batch row. */
#define MB_LSTM_BODY(T, LO, HI)                                                                  \
    int16_t *const g0 = (int16_t *)scratch;                                                      \
    int16_t *const g1 = g0 + p->units;                                                           \
    int16_t *const g2 = g1 + p->units;                                                           \
    for (int32_t b = 0; b < p->batches; b++) {                                                   \
        T *h = hidden + b * p->units;                                                            \
        int16_t *c = cell + b * p->units;                                                        \
        for (int32_t t = 0; t < p->time_steps; t++) {                                            \
            const int32_t row = p->time_major ? t * p->batches + b : b * p->time_steps + t;      \
            const T *x = input + row * p->input_size;                                            \
            gate_##T(p, MB_LSTM_FORGET, x, h, weights, bias, g0);                                \
            gate_##T(p, MB_LSTM_INPUT, x, h, weights, bias, g1);                                 \
            gate_##T(p, MB_LSTM_CELL, x, h, weights, bias, g2);                                  \
            update_cell(p, g0, g1, g2, c);                                                       \
            gate_##T(p, MB_LSTM_OUTPUT, x, h, weights, bias, g1);                                \
            mb_tanh_s16(p->tanh_multiplier, p->tanh_shift, c, g0, p->units);                     \
            T *out = output + row * p->units;                                                    \
            for (int32_t u = 0; u < p->units; u++) {                                             \
                h[u] = (T)mb_clamp_i32(hidden_value(p, g0[u], g1[u]), LO, HI);                   \
                out[u] = h[u];                                                                   \
            }                                                                                    \
        }                                                                                        \
    }

void mb_lstm_s8(const mb_lstm_params *p, const int8_t *input, const int8_t *const weights[8],
                const int32_t *bias, int8_t *hidden, int16_t *cell, int8_t *output,
                void *scratch)
{
    MB_LSTM_BODY(int8_t, -128, 127)
}

void mb_lstm_s16(const mb_lstm_params *p, const int16_t *input, const int8_t *const weights[8],
                 const int64_t *bias, int16_t *hidden, int16_t *cell, int16_t *output,
                 void *scratch)
{
    MB_LSTM_BODY(int16_t, -32768, 32767)
}
