#include "microbuild/kernels/lstm.h"

#include "microbuild/dsp_words.h"

#include "microbuild/kernels/sigmoid16.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

/* v clamped to a signed BITS-bit integer (LO..HI): one SSAT where the core has it. Every clamp
 * below runs once per unit, gate and time step, and the compare-and-select form costs four
 * instructions. */
#if defined(__ARM_FEATURE_SAT)
#include <arm_acle.h>
#define MB_LSTM_SATURATE(v, LO, HI, BITS) __ssat((v), (BITS))
#else
#define MB_LSTM_SATURATE(v, LO, HI, BITS) mb_clamp_i32((v), (LO), (HI))
#endif

/* v clamped to int16's range, kept as int32: the values only feed more arithmetic, and an int16
 * type would cost a sign extension (SXTH) after every SSAT. */
static int32_t saturate_16(int32_t v)
{
    return MB_LSTM_SATURATE(v, -32768, 32767, 16);
}

/* acc[r] = bias[r] + row first + r of the matrix m . v for r < n <= MB_LSTM_BLOCK (rows of
 * cols values): four rows per pass share each load of v. The sums cannot overflow (the compiler
 * checks the bound), so their order does not change them. T: the vector's type, B: the accumulator type. */
#define MB_LSTM_DOT(NAME, T, B)                                                                  \
    static void NAME(const void *m, int32_t first, int32_t cols, const void *vector, int32_t n, \
                     const B *bias, B *acc)                                                      \
    {                                                                                            \
        const int8_t *w = (const int8_t *)m + first * cols;                                      \
        const T *v = (const T *)vector;                                                          \
        for (; n >= 4; n -= 4, w += 4 * cols, bias += 4, acc += 4) {                             \
            const int8_t *w0 = w, *w1 = w + cols, *w2 = w + 2 * cols, *w3 = w + 3 * cols;        \
            B a0 = bias[0], a1 = bias[1], a2 = bias[2], a3 = bias[3];                            \
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
        }                                                                                        \
        for (int32_t r = 0; r < n; r++) {                                                        \
            const int8_t *row = w + r * cols;                                                    \
            B a = bias[r];                                                                       \
            for (int32_t c = 0; c < cols; c++) {                                                 \
                a += (B)((int32_t)row[c] * (int32_t)v[c]);                                       \
            }                                                                                    \
            acc[r] = a;                                                                          \
        }                                                                                        \
    }

MB_LSTM_DOT(dot_s8, int8_t, int32_t)
MB_LSTM_DOT(dot_s16, int16_t, int64_t)

/* gate[u + k] for k < n: the two layers' sums acc_in / acc_rec rescaled, clamped, added, then
 * squashed by SQUASH (mb_logistic_s16_of / mb_tanh_s16_of) in the same pass: the gates' Q3.12
 * input is TFLM's Logistic / Tanh with multiplier 3, shift 0 (cell_state_scale_power -12), so
 * the table's input is 3 x the sum. */
#define MB_LSTM_GATE_SUMS(REQUANT, IN_SHIFT, REC_SHIFT, SQUASH)                                  \
    MB_LSTM_GATE_SUMS2(REQUANT, REQUANT, IN_SHIFT, REC_SHIFT, SQUASH)
#define MB_LSTM_GATE_SUMS2(IN_REQUANT, REC_REQUANT, IN_SHIFT, REC_SHIFT, SQUASH)                 \
    for (int32_t k = 0; k < n; k++) {                                                            \
        const int32_t from_input = saturate_16(IN_REQUANT(acc_in[k], in_m, IN_SHIFT));           \
        const int32_t from_hidden = saturate_16(REC_REQUANT(acc_rec[k], rec_m, REC_SHIFT));      \
        const int32_t sum = saturate_16(from_input + from_hidden);                               \
        gate[u + k] = SQUASH(3 * sum);                                                           \
    }

/* mb_requantize_fast32(x, m, -right) wherever the result is then clamped to int16, for right
 * from 1 to 16 (int32 sums only). Its rounding shift adds half (minus one below zero) with a
 * saturating QADD and shifts: one constant where the mask-and-threshold form needs two, which
 * keeps a gate loop's constants in registers. The add saturates only when high + half passes
 * INT32_MAX, giving INT32_MAX >> right = 2^(31 - right) - 1 instead of 2^(31 - right): both
 * >= 32767 for right <= 16, so the int16 clamp makes them the same. */
#if defined(__ARM_FEATURE_DSP)
#define MB_LSTM_QADD_ROUNDS(shift) ((shift) <= -1 && (shift) >= -16)
static inline int32_t requantize_qadd(int32_t x, int32_t multiplier, int32_t right)
{
    const int64_t product = (int64_t)x * multiplier;
    const int32_t high = (int32_t)((product + ((int64_t)1 << 30)) >> 31);
    const int32_t half = (int32_t)1 << (right - 1);
    return __qadd(high, half + (high >> 31)) >> right;
}

/* The two layers' rescalings with mb_rescale_small (dsp_words.h), from the gate loop's in_*
 * and rec_* constants: _ROUND with a right shift, _EXACT without one (the shift argument is
 * unused). */
#define MB_LSTM_IN_ROUND(acc, m, unused) mb_rescale_small((acc), in_l, (m), in_half, in_r)
#define MB_LSTM_IN_EXACT(acc, m, unused) mb_smmulr((acc) << in_l, (m))
#define MB_LSTM_REC_ROUND(acc, m, unused) mb_rescale_small((acc), rec_l, (m), rec_half, rec_r)
#define MB_LSTM_REC_EXACT(acc, m, unused) mb_smmulr((acc) << rec_l, (m))

/* The small-sums branch of MB_LSTM_GATE_SQUASHED (DSP builds; else empty): mb_rescale_small on
 * both layers, one loop per combination of right shifts so none is a run-time test. */
#define MB_LSTM_SMALL_SUMS_FIRST(QADD, SQUASH)                                                   \
    if ((QADD) && p->small_sums) {                                           \
        const int32_t in_l = 1 + (in_s > 0 ? in_s : 0), in_r = in_s < 0 ? -in_s : 0;           \
        const int32_t rec_l = 1 + (rec_s > 0 ? rec_s : 0), rec_r = rec_s < 0 ? -rec_s : 0;      \
        const int32_t in_half = (int32_t)((uint32_t)1 << in_r) >> 1;                                     \
        const int32_t rec_half = (int32_t)((uint32_t)1 << rec_r) >> 1;                                  \
        if (in_r > 0 && rec_r > 0) {                                                             \
            MB_LSTM_GATE_SUMS2(MB_LSTM_IN_ROUND, MB_LSTM_REC_ROUND, 0, 0, SQUASH);               \
        } else if (in_r > 0) {                                                                   \
            MB_LSTM_GATE_SUMS2(MB_LSTM_IN_ROUND, MB_LSTM_REC_EXACT, 0, 0, SQUASH);               \
        } else if (rec_r > 0) {                                                                  \
            MB_LSTM_GATE_SUMS2(MB_LSTM_IN_EXACT, MB_LSTM_REC_ROUND, 0, 0, SQUASH);               \
        } else {                                                                                 \
            MB_LSTM_GATE_SUMS2(MB_LSTM_IN_EXACT, MB_LSTM_REC_EXACT, 0, 0, SQUASH);               \
        }                                                                                        \
    } else
#else
#define MB_LSTM_QADD_ROUNDS(shift) 0
#define requantize_qadd mb_requantize_fast32
#define MB_LSTM_SMALL_SUMS_FIRST(QADD, SQUASH)
#endif


/* The usual cases first: both scales shift right only (by 1 to 16, QADD: int32 sums only).
 * Shifts the compiler can see are <= 0 drop the left shift and free registers for the loop's
 * constants. */
#define MB_LSTM_GATE_SQUASHED(REQUANT, QADD, SQUASH)                                             \
    MB_LSTM_SMALL_SUMS_FIRST(QADD, SQUASH)                                                       \
    if (QADD && MB_LSTM_QADD_ROUNDS(in_s) && MB_LSTM_QADD_ROUNDS(rec_s)) {                \
        MB_LSTM_GATE_SUMS(requantize_qadd, -in_s, -rec_s, SQUASH);                               \
    } else if (in_s <= 0 && rec_s <= 0) {                                                        \
        const int32_t in_r = in_s < 0 ? in_s : 0, rec_r = rec_s < 0 ? rec_s : 0;                \
        MB_LSTM_GATE_SUMS(REQUANT, in_r, rec_r, SQUASH);                                         \
    } else {                                                                                     \
        MB_LSTM_GATE_SUMS(REQUANT, in_s, rec_s, SQUASH);                                         \
    }

/* Both fully connected layers of one gate, each rescaled to Q3.12 and clamped to int16 as TFLM
 * does, their saturated sum squashed into gate[]. T is the activation type, B
 * the bias/accumulator type, DOT the type of its row product (the reference's above or a
 * variant's), REQUANT the rescaling of an accumulator, QADD 1 where the accumulator is int32.  */
#define MB_LSTM_GATE(T, B, DOT, REQUANT, QADD)                                                   \
    static void gate_##T(const mb_lstm_params *p, int32_t g, const void *x, const void *h,      \
                         const int8_t *const weights[8], const B *bias, int16_t *gate, DOT *dot)  \
    {                                                                                            \
        const int32_t units = p->units, depth = p->input_size;                                  \
        const void *w_in = weights[g], *w_rec = weights[4 + g];                                 \
        const B *b_in = bias + g * units, *b_rec = bias + (4 + g) * units;                      \
        /* Loop invariants in registers: the stores to gate[] could alias *p otherwise. */      \
        const int32_t in_m = p->input_multiplier[g], in_s = p->input_shift[g];                  \
        const int32_t rec_m = p->recurrent_multiplier[g], rec_s = p->recurrent_shift[g];        \
        /* MB_LSTM_BLOCK rows per dot call: the calls and their set-up, not the sums, are what  \
         * a small hidden size spends its time on. */                                           \
        for (int32_t u = 0; u < units; u += MB_LSTM_BLOCK) {                                    \
            const int32_t n = units - u < MB_LSTM_BLOCK ? units - u : MB_LSTM_BLOCK;            \
            B acc_in[MB_LSTM_BLOCK], acc_rec[MB_LSTM_BLOCK];                                     \
            dot(w_in, u, depth, x, n, b_in + u, acc_in);                                         \
            dot(w_rec, u, units, h, n, b_rec + u, acc_rec);                                      \
            if (g == MB_LSTM_CELL) {                                                             \
                MB_LSTM_GATE_SQUASHED(REQUANT, QADD, mb_tanh_s16_of)                             \
            } else {                                                                             \
                MB_LSTM_GATE_SQUASHED(REQUANT, QADD, mb_logistic_s16_of)                         \
            }                                                                                    \
        }                                                                                        \
    }

/* mb_requantize_fast32 is mb_mul_by_quantized_multiplier's result in fewer instructions for the
 * positive multipliers the compiler emits (quant_fast.h says why); its 32-bit rounding shift
 * suits these run-time shifts. */
#define MB_REQUANT_S32(acc, m, s) mb_requantize_fast32((acc), (m), (s))
#define MB_REQUANT_S64(acc, m, s) mb_mul_by_quantized_multiplier_s64((acc), (m), (int)(s))

MB_LSTM_GATE(int8_t, int32_t, mb_lstm_dot_s8, MB_REQUANT_S32, 1)
MB_LSTM_GATE(int16_t, int64_t, mb_lstm_dot_s16, MB_REQUANT_S64, 0)

/* The cell state update of one batch row from its forget, input and cell gates: two int16
 * multiplications (each requantized and clamped as TFLM's Mul does), a saturating add, the clip. */
static void update_cell(const mb_lstm_params *p, const int16_t *forget, const int16_t *input_gate,
                        const int16_t *cell_gate, int16_t *cell)
{
    const int32_t forget_m = p->forget_multiplier, forget_s = p->forget_shift;
    const int32_t update_m = p->update_multiplier, update_s = p->update_shift;
    /* Without a clip, the int16 range: the clamp is then a no-op, not a branch per unit. */
    const int32_t lo = p->cell_clip > 0 ? -p->cell_clip : -32768;
    const int32_t hi = p->cell_clip > 0 ? p->cell_clip : 32767;
    const int32_t units = p->units;
#define MB_LSTM_CELL_LOOP(FORGET_SHIFT, UPDATE_SHIFT)                                            \
    for (int32_t u = 0; u < units; u++) {                                                        \
        const int32_t kept = saturate_16(mb_requantize_fast32(                                   \
            (int32_t)forget[u] * (int32_t)cell[u], forget_m, FORGET_SHIFT));                     \
        const int32_t added = saturate_16(mb_requantize_fast32(                                  \
            (int32_t)input_gate[u] * (int32_t)cell_gate[u], update_m, UPDATE_SHIFT));            \
        const int32_t sum = saturate_16(kept + added);                                           \
        cell[u] = (int16_t)mb_clamp_i32(sum, lo, hi);                                            \
    }
#if defined(__ARM_FEATURE_DSP)
    /* Both products are a Q0.15 gate (the sigmoids are >= 0) times an int16: below 2^30 in
     * magnitude, so mb_rescale_small's doubling fits whatever the model. */
    if (forget_s < 0 && update_s < 0) {
        const int32_t forget_half = (int32_t)1 << (-forget_s - 1);
        const int32_t update_half = (int32_t)1 << (-update_s - 1);
        for (int32_t u = 0; u < units; u++) {
            const int32_t kept = saturate_16(mb_rescale_small(
                (int32_t)forget[u] * (int32_t)cell[u], 1, forget_m, forget_half, -forget_s));
            const int32_t added = saturate_16(mb_rescale_small(
                (int32_t)input_gate[u] * (int32_t)cell_gate[u], 1, update_m, update_half,
                -update_s));
            const int32_t sum = saturate_16(kept + added);
            cell[u] = (int16_t)mb_clamp_i32(sum, lo, hi);
        }
        return;
    }
#endif
    if (forget_s <= 0 && update_s <= 0) { /* the usual case, as in the gates */
        MB_LSTM_CELL_LOOP(forget_s < 0 ? forget_s : 0, update_s < 0 ? update_s : 0)
    } else {
        MB_LSTM_CELL_LOOP(forget_s, update_s)
    }
#undef MB_LSTM_CELL_LOOP
}

/* tanh(cell) x output gate, requantized to the hidden state's scale, clamped to T, into the
 * hidden state and the output row. The parameters are read once: stores through the int8 h
 * could alias *p. */
/* DSP builds: tanh(cell) x the output gate (>= 0) is below 2^30 in magnitude, so with a right
 * shift mb_rescale_small takes it (then returns). */
#if defined(__ARM_FEATURE_DSP)
#define MB_LSTM_HIDDEN_SMALL(T, LO, HI, BITS)                                                    \
    if (s < 0) {                                                                                 \
        const int32_t half = (int32_t)1 << (-s - 1);                                             \
        for (int32_t u = 0; u < units; u++) {                                                    \
            const int32_t product = (int32_t)tanh_cell[u] * (int32_t)output_gate[u];            \
            const int32_t v = zero_point + mb_rescale_small(product, 1, m, half, -s);              \
            h[u] = out[u] = (T)MB_LSTM_SATURATE(v, LO, HI, BITS);                                \
        }                                                                                        \
        return;                                                                                  \
    }
#else
#define MB_LSTM_HIDDEN_SMALL(T, LO, HI, BITS)
#endif

#define MB_LSTM_HIDDEN(T, LO, HI, BITS)                                                          \
    static void hidden_##T(const mb_lstm_params *p, const int16_t *tanh_cell,                   \
                           const int16_t *output_gate, T *h, T *out)                            \
    {                                                                                            \
        const int32_t m = p->hidden_multiplier, s = p->hidden_shift;                            \
        const int32_t zero_point = p->hidden_zero_point, units = p->units;                      \
        MB_LSTM_HIDDEN_SMALL(T, LO, HI, BITS)                                                    \
        for (int32_t u = 0; u < units; u++) {                                                    \
            const int32_t product = (int32_t)tanh_cell[u] * (int32_t)output_gate[u];            \
            const int32_t v = zero_point + mb_requantize_fast32(product, m, s);                 \
            h[u] = out[u] = (T)MB_LSTM_SATURATE(v, LO, HI, BITS);                                \
        }                                                                                        \
    }

MB_LSTM_HIDDEN(int8_t, -128, 127, 8)
MB_LSTM_HIDDEN(int16_t, -32768, 32767, 16)

/* T: activation type, LO/HI: its range. Scratch: three gates of one batch row, then (with a
 * prepare step) the prepared input and hidden vectors (mb_lstm_prepared_bytes). */
#define MB_LSTM_BODY(T, LO, HI)                                                                  \
    int16_t *const g0 = (int16_t *)scratch;                                                      \
    int16_t *const g1 = g0 + p->units;                                                           \
    int16_t *const g2 = g1 + p->units;                                                           \
    uint8_t *const x_buffer = (uint8_t *)(((uintptr_t)(g2 + p->units) + 7) & ~(uintptr_t)7);     \
    uint8_t *const h_buffer = x_buffer + mb_lstm_prepared_bytes(p->input_size);                  \
    for (int32_t b = 0; b < p->batches; b++) {                                                   \
        T *h = hidden + b * p->units;                                                            \
        int16_t *c = cell + b * p->units;                                                        \
        for (int32_t t = 0; t < p->time_steps; t++) {                                            \
            const int32_t row = p->time_major ? t * p->batches + b : b * p->time_steps + t;      \
            const void *x = input + row * p->input_size;                                         \
            const void *hv = h;                                                                  \
            if (prepare != 0) { /* once per step: h changes only at its end */                  \
                x = prepare(x, p->input_size, x_buffer);                                         \
                hv = prepare(hv, p->units, h_buffer);                                            \
            }                                                                                    \
            gate_##T(p, MB_LSTM_FORGET, x, hv, weights, bias, g0, dot);                          \
            gate_##T(p, MB_LSTM_INPUT, x, hv, weights, bias, g1, dot);                           \
            gate_##T(p, MB_LSTM_CELL, x, hv, weights, bias, g2, dot);                            \
            update_cell(p, g0, g1, g2, c);                                                       \
            gate_##T(p, MB_LSTM_OUTPUT, x, hv, weights, bias, g1, dot);                          \
            mb_tanh_s16(p->tanh_multiplier, p->tanh_shift, c, g0, p->units);                     \
            hidden_##T(p, g0, g1, h, output + row * p->units);                                   \
        }                                                                                        \
    }

void mb_lstm_s8_with(const mb_lstm_params *p, const int8_t *input, const int8_t *const weights[8],
                     const int32_t *bias, int8_t *hidden, int16_t *cell, int8_t *output,
                     void *scratch, mb_lstm_prepare *prepare, mb_lstm_dot_s8 *dot)
{
    MB_LSTM_BODY(int8_t, -128, 127)
}

void mb_lstm_s16_with(const mb_lstm_params *p, const int16_t *input,
                      const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                      int16_t *cell, int16_t *output, void *scratch, mb_lstm_prepare *prepare,
                      mb_lstm_dot_s16 *dot)
{
    MB_LSTM_BODY(int16_t, -32768, 32767)
}

void mb_lstm_s8(const mb_lstm_params *p, const int8_t *input, const int8_t *const weights[8],
                const int32_t *bias, int8_t *hidden, int16_t *cell, int8_t *output,
                void *scratch)
{
    mb_lstm_s8_with(p, input, weights, bias, hidden, cell, output, scratch,
                    0, dot_s8);
}

void mb_lstm_s16(const mb_lstm_params *p, const int16_t *input, const int8_t *const weights[8],
                 const int64_t *bias, int16_t *hidden, int16_t *cell, int16_t *output,
                 void *scratch)
{
    mb_lstm_s16_with(p, input, weights, bias, hidden, cell, output, scratch,
                     0, dot_s16);
}
