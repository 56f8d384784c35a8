/* UNIDIRECTIONAL_SEQUENCE_LSTM, Helium variants "mve" (int8) and "mve_s16" (16x8) for
 * Cortex-M55/M85: lstm.c's arithmetic (TFLM's), four units per pass, all of it in vectors.
 *
 * Row products: four weight rows per pass share each vector load of the input or hidden state.
 * - int8: the weights pre-arranged as FULLY_CONNECTED's mve variant has them (arrange_rows(4,
 *   16): a group of four rows 16-byte chunk by chunk, one pointer), VLDRB of 16 int8 values,
 *   VMLADAVA (16 products summed into an int32 scalar) per row: 9 instructions per 64 MACs;
 * - 16x8: weights as stored (4 row pointers), VLDRH of 8 int16 values, the rows' 8 weights
 *   widened by VLDRB.S16, VMLALDAVA into the reference's int64 sums.
 * The tail is tail-predicated (VCTP): masked lanes are neither read nor summed. Sums are exact,
 * so the order does not matter.
 *
 * Element-wise part: the gates of four units never leave the registers. One int32 lane per
 * unit: the four gates' rescaling to Q3.12 (VQRDMULH/VRSHL, requantize_mve.h; 16x8: the int64
 * rescaling stays scalar, as lstm.c's), the int16 clamps and saturating sum (VMAX/VMIN), sigmoid
 * and tanh (the table's two entries by two VLDRH gathers, the interpolation and the sign's
 * select on 4 lanes), the cell update and the hidden state, then one predicated store per
 * group (VCTP for units % 4). The new hidden state goes to the output row as it is made and is
 * copied to h after the step: every group reads the old h. No scratch: lstm.c's gate buffers
 * are not used. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <stdint.h>

#include "microbuild/kernels/lstm.h"
#include "microbuild/kernels/requantize_mve.h"
#include "microbuild/kernels/sigmoid16_mve.h"
#include "microbuild/quant.h"

/* The sums of up to four weight rows . v, as the lanes of a vector (lanes >= n are 0): n == 4,
 * the group arranged [cols / 16][4 rows][16 bytes] then the last cols % 16 bytes of each row,
 * row after row; n < 4 (the last rows of a gate), the rows as stored. Inlined: a call per
 * row group cost more than a 28-column product (its set-up and the sums' trip through memory). */
static inline __attribute__((always_inline)) int32x4_t rows4_s8(const int8_t *w, int32_t cols,
                                                                const int8_t *v, int32_t n)
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    if (n == 4) {
        const int32_t chunks = (int32_t)((uint32_t)cols >> 4), tail = cols & 15;
        for (int32_t k = 0; k < chunks; k++, v += 16, w += 64) {
            const int8x16_t x = vldrbq_s8(v);
            a0 = vmladavaq_s8(a0, x, vldrbq_s8(w));
            a1 = vmladavaq_s8(a1, x, vldrbq_s8(w + 16));
            a2 = vmladavaq_s8(a2, x, vldrbq_s8(w + 32));
            a3 = vmladavaq_s8(a3, x, vldrbq_s8(w + 48));
        }
        if (tail > 0) {
            /* The loads zero the lanes past the tail, so the sums need no predicate: the
             * products there are 0 (each predicated VMLADAVA costs a VPST of its own). */
            const mve_pred16_t p = vctp8q((uint32_t)tail);
            const int8x16_t x = vldrbq_z_s8(v, p);
            a0 = vmladavaq_s8(a0, x, vldrbq_z_s8(w, p));
            a1 = vmladavaq_s8(a1, x, vldrbq_z_s8(w + tail, p));
            a2 = vmladavaq_s8(a2, x, vldrbq_z_s8(w + 2 * tail, p));
            a3 = vmladavaq_s8(a3, x, vldrbq_z_s8(w + 3 * tail, p));
        }
    } else {
        int32_t sums[4] = {0, 0, 0, 0};
        for (int32_t r = 0; r < n; r++) {
            const int8_t *row = w + r * cols;
            for (int32_t c = 0; c < cols; c += 16) {
                const mve_pred16_t p = vctp8q((uint32_t)(cols - c));
                sums[r] = vmladavaq_p_s8(sums[r], vldrbq_z_s8(v + c, p), vldrbq_z_s8(row + c, p),
                                         p);
            }
        }
        return vldrwq_s32(sums);
    }
    int32x4_t acc = vdupq_n_s32(0);
    acc = vsetq_lane_s32(a0, acc, 0);
    acc = vsetq_lane_s32(a1, acc, 1);
    acc = vsetq_lane_s32(a2, acc, 2);
    return vsetq_lane_s32(a3, acc, 3);
}

/* ---- The element-wise part on 4 int32 lanes: one lane per unit, exactly lstm.c's scalar
 * arithmetic (which is TFLM's) lane by lane. ---- */

static inline int32x4_t clamp_s16(int32x4_t x)
{
    return vminq_s32(vmaxq_s32(x, vdupq_n_s32(-32768)), vdupq_n_s32(32767));
}

/* The parameters of a call, read once into locals (stores through h could alias *p). */
typedef struct {
    mb_mve_requant in[4], rec[4]; /* each gate's input and recurrent layer -> Q3.12 */
    mb_mve_requant forget, update, hidden;
    int32_t zero_point, clip, tanh_multiplier, tanh_neg_shift;
} lstm_lanes;

static void lanes_of(const mb_lstm_params *p, lstm_lanes *l)
{
    for (int32_t g = 0; g < 4; g++) {
        l->in[g] = mb_mve_requant_of(p->input_multiplier[g], p->input_shift[g]);
        l->rec[g] = mb_mve_requant_of(p->recurrent_multiplier[g], p->recurrent_shift[g]);
    }
    l->forget = mb_mve_requant_of(p->forget_multiplier, p->forget_shift);
    l->update = mb_mve_requant_of(p->update_multiplier, p->update_shift);
    l->hidden = mb_mve_requant_of(p->hidden_multiplier, p->hidden_shift);
    l->zero_point = p->hidden_zero_point;
    l->clip = p->cell_clip;
    l->tanh_multiplier = p->tanh_multiplier;
    l->tanh_neg_shift = -p->tanh_shift;
}

/* Everything after the row products for four units (lstm.c: gate_*, update_cell, hidden_*):
 * gates[g] holds each gate's two layers already rescaled to Q3.12; each is clamped to int16,
 * their saturated sum squashed (multiplier 3, shift 0: x 3), the cell state updated under `keep`
 * and the hidden state returned with its zero point, not yet clamped to the output type. */
static inline int32x4_t units_after_products(const lstm_lanes *l, const int32x4_t from_input[4],
                                             const int32x4_t from_hidden[4], int16_t *cell,
                                             mve_pred16_t keep)
{
    int32x4_t act[4];
    for (int32_t g = 0; g < 4; g++) {
        const int32x4_t sum = clamp_s16(vaddq_s32(clamp_s16(from_input[g]),
                                                  clamp_s16(from_hidden[g])));
        const int32x4_t x = vmulq_n_s32(sum, 3);
        act[g] = g == MB_LSTM_CELL ? mb_tanh_s16_lanes(x) : mb_logistic_s16_lanes(x, 1);
    }
    const int32x4_t old = vldrhq_z_s32(cell, keep);
    const int32x4_t kept = clamp_s16(mb_mve_requantize_any(vmulq_s32(act[MB_LSTM_FORGET], old),
                                                   l->forget));
    const int32x4_t added = clamp_s16(mb_mve_requantize_any(
        vmulq_s32(act[MB_LSTM_INPUT], act[MB_LSTM_CELL]), l->update));
    int32x4_t c = clamp_s16(vaddq_s32(kept, added));
    if (l->clip > 0) {
        c = vminq_s32(vmaxq_s32(c, vdupq_n_s32(-l->clip)), vdupq_n_s32(l->clip));
    }
    vstrhq_p_s32(cell, c, keep);
    /* tanh's input rescaling as sigmoid16.c: (c * multiplier + round) >> shift, a VRSHL */
    const int32x4_t t = mb_tanh_s16_lanes(vrshlq_n_s32(vmulq_n_s32(c, l->tanh_multiplier),
                                                l->tanh_neg_shift));
    return vaddq_n_s32(mb_mve_requantize_any(vmulq_s32(t, act[MB_LSTM_OUTPUT]), l->hidden),
                       l->zero_point);
}

/* One time step of one batch row, int8: for every group of four units, the four gates' input
 * and recurrent row products (with their biases), then everything else in registers. The new
 * hidden state goes to the output row first (the other groups still read the old one), then
 * to h. */
static void step_s8(const lstm_lanes *l, int32_t depth, int32_t units, const int8_t *x, int8_t *h,
                    int16_t *cell, int8_t *out, const int8_t *const weights[8],
                    const int32_t *bias)
{
    for (int32_t u = 0; u < units; u += 4) {
        const int32_t n = units - u < 4 ? units - u : 4;
        const mve_pred16_t keep = vctp32q((uint32_t)n);
        int32x4_t from_input[4], from_hidden[4];
        for (int32_t g = 0; g < 4; g++) {
            const int32x4_t in = vaddq_s32(rows4_s8(weights[g] + u * depth, depth, x, n),
                                           vldrwq_z_s32(bias + g * units + u, keep));
            const int32x4_t rec = vaddq_s32(rows4_s8(weights[4 + g] + u * units, units, h, n),
                                            vldrwq_z_s32(bias + (4 + g) * units + u, keep));
            from_input[g] = mb_mve_requantize_any(in, l->in[g]);
            from_hidden[g] = mb_mve_requantize_any(rec, l->rec[g]);
        }
        const int32x4_t v = units_after_products(l, from_input, from_hidden, cell + u, keep);
        vstrbq_p_s32(out + u, vminq_s32(vmaxq_s32(v, vdupq_n_s32(-128)), vdupq_n_s32(127)),
                     keep);
    }
    for (int32_t u = 0; u < units; u += 16) {
        const mve_pred16_t copy = vctp8q((uint32_t)(units - u));
        vstrbq_p_s8(h + u, vldrbq_z_s8(out + u, copy), copy);
    }
}

static void dot_s16_mve(const void *m, int32_t first, int32_t cols, const void *vector,
                        int32_t n, int64_t *acc)
{
    const int8_t *w = (const int8_t *)m + first * cols;
    const int16_t *v = (const int16_t *)vector;
    int32_t r = 0;
    if (n == 4) {
        const int8_t *w0 = w, *w1 = w + cols, *w2 = w + 2 * cols, *w3 = w + 3 * cols;
        int64_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
        for (int32_t c = 0; c < cols; c += 8) {
            const mve_pred16_t p = vctp16q((uint32_t)(cols - c));
            const int16x8_t x = vldrhq_z_s16(v + c, p);
            a0 = vmlaldavaq_p_s16(a0, x, vldrbq_z_s16(w0 + c, p), p);
            a1 = vmlaldavaq_p_s16(a1, x, vldrbq_z_s16(w1 + c, p), p);
            a2 = vmlaldavaq_p_s16(a2, x, vldrbq_z_s16(w2 + c, p), p);
            a3 = vmlaldavaq_p_s16(a3, x, vldrbq_z_s16(w3 + c, p), p);
        }
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
        r = 4;
    }
    for (; r < n; r++) {
        const int8_t *row = w + r * cols;
        int64_t a = acc[r];
        for (int32_t c = 0; c < cols; c += 8) {
            const mve_pred16_t p = vctp16q((uint32_t)(cols - c));
            a = vmlaldavaq_p_s16(a, vldrhq_z_s16(v + c, p), vldrbq_z_s16(row + c, p), p);
        }
        acc[r] = a;
    }
}

/* The same step, 16x8: the row products are int64 sums (VMLALDAVA), rescaled one lane at a
 * time as lstm.c's reference does (a 64-bit product, no 4-lane form), then as int8. */
static void step_s16(const mb_lstm_params *p, const lstm_lanes *l, const int16_t *x, int16_t *h,
                     int16_t *cell, int16_t *out, const int8_t *const weights[8],
                     const int64_t *bias)
{
    const int32_t depth = p->input_size, units = p->units;
    for (int32_t u = 0; u < units; u += 4) {
        const int32_t n = units - u < 4 ? units - u : 4;
        int32x4_t from_input[4], from_hidden[4];
        for (int32_t g = 0; g < 4; g++) {
            /* lanes past n stay 0 (their results are never stored); set one by one, as an
             * initializer GCC zeroed the four arrays with a memset call per gate */
            int64_t in[4], rec[4];
            int32_t in_q[4], rec_q[4];
            in_q[3] = rec_q[3] = 0;
            in_q[2] = rec_q[2] = 0;
            in_q[1] = rec_q[1] = 0;
            /* not a loop either: GCC made one two memcpy calls */
            const int64_t *b_in = bias + g * units + u, *b_rec = bias + (4 + g) * units + u;
            in[0] = b_in[0], rec[0] = b_rec[0];
            if (n > 1) {
                in[1] = b_in[1], rec[1] = b_rec[1];
            }
            if (n > 2) {
                in[2] = b_in[2], rec[2] = b_rec[2];
            }
            if (n > 3) {
                in[3] = b_in[3], rec[3] = b_rec[3];
            }
            dot_s16_mve(weights[g], u, depth, x, n, in);
            dot_s16_mve(weights[4 + g], u, units, h, n, rec);
            for (int32_t k = 0; k < n; k++) {
                in_q[k] = mb_mul_by_quantized_multiplier_s64(in[k], p->input_multiplier[g],
                                                             p->input_shift[g]);
                rec_q[k] = mb_mul_by_quantized_multiplier_s64(rec[k], p->recurrent_multiplier[g],
                                                              p->recurrent_shift[g]);
            }
            from_input[g] = vldrwq_s32(in_q);
            from_hidden[g] = vldrwq_s32(rec_q);
        }
        const mve_pred16_t keep = vctp32q((uint32_t)n);
        const int32x4_t v = units_after_products(l, from_input, from_hidden, cell + u, keep);
        vstrhq_p_s32(out + u, clamp_s16(v), keep);
    }
    for (int32_t u = 0; u < units; u += 8) {
        const mve_pred16_t copy = vctp16q((uint32_t)(units - u));
        vstrhq_p_s16(h + u, vldrhq_z_s16(out + u, copy), copy);
    }
}

/* The batch rows and time steps of lstm.c's body; the gates need no scratch (registers). */
#define MB_LSTM_MVE_STEPS(STEP)                                                                  \
    lstm_lanes l;                                                                                \
    lanes_of(p, &l);                                                                             \
    (void)scratch;                                                                               \
    const int32_t depth = p->input_size, units = p->units;                                       \
    for (int32_t b = 0; b < p->batches; b++) {                                                   \
        for (int32_t t = 0; t < p->time_steps; t++) {                                            \
            const int32_t row = p->time_major ? t * p->batches + b : b * p->time_steps + t;      \
            STEP;                                                                                \
        }                                                                                        \
    }

void mb_lstm_s8_mve(const mb_lstm_params *p, const int8_t *input, const int8_t *const weights[8],
                    const int32_t *bias, int8_t *hidden, int16_t *cell, int8_t *output,
                    void *scratch)
{
    MB_LSTM_MVE_STEPS(step_s8(&l, depth, units, input + row * depth, hidden + b * units,
                              cell + b * units, output + row * units, weights, bias))
}

void mb_lstm_s16_mve(const mb_lstm_params *p, const int16_t *input,
                     const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                     int16_t *cell, int16_t *output, void *scratch)
{
    MB_LSTM_MVE_STEPS(step_s16(p, &l, input + row * depth, hidden + b * units,
                               cell + b * units, output + row * units, weights, bias))
}

#else
typedef int mb_lstm_mve_unused;  /* ISO C wants a non-empty translation unit */
#endif
