/* SVDF, Arm DSP ("dsp": Cortex-M4/M7/M33/M55) and Helium ("mve": Cortex-M55/M85) variants: the
 * reference's arithmetic (svdf.c, bit-exact with TFLM) with its three loops made cheap.
 *
 * - The zero points leave the inner loops: every sum is an int32 sum that wraps as TFLM's does,
 *   so sum w * (x - zp) = sum w * x - zp * sum w modulo 2^32, exactly; the compiler passes
 *   -zp * sum w per filter (folds: the input's for the feature weights, then the state's for the
 *   time weights).
 * - The feature weights . input: DSP: the input widened once per batch row into the pairs
 *   (x0, x2), (x1, x3) that SXTB16 makes of a weight word, four filters per pass on weights
 *   arranged as FULLY_CONNECTED's dsp variant has them, with lstm_dsp.c's assembly loop (20
 *   instructions per 16 MACs); Helium: VMLADAVA over 16 int8 lanes, tail-predicated.
 * - The state's shift by one value: 32-bit (DSP) or vector (Helium) copies instead of one value
 *   at a time.
 * - Each filter's state row . its time weights: int16: SMLAD on the pairs as stored (int8:
 *   SXTB16 first) / VMLADAVA over 8 int16 (16 int8) lanes.
 * - Scale 2 with mb_requantize_fast (quant_fast.h: the same result).
 * Scratch: the reference's, or 2 x input_size + 8 bytes for the widened input when larger. */
#include <stdint.h>
#include <string.h>

#include "microbuild/dsp_words.h"
#include "microbuild/kernels/lstm.h"
#include "microbuild/kernels/svdf.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

#if defined(__ARM_FEATURE_DSP) || defined(__ARM_FEATURE_MVE)

/* Wrapping int32 addition (see svdf.c). */
static inline int32_t wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline void store32(void *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

#endif

#if defined(__ARM_FEATURE_DSP)
/* Row w (cols int8) . the widened input, added to acc (wrapping). */
static int32_t feature_dot_dsp(const int8_t *w, const int32_t *x, int32_t cols, int32_t acc)
{
    const int32_t full = cols & ~3;
    int32_t c = 0;
    for (; c < full; c += 4, x += 2) {
        const uint32_t q = mb_load32(w + c);
        acc = __smlad(mb_even16(q), x[0], acc);
        acc = __smlad(mb_odd16(q), x[1], acc);
    }
    const int16_t *tail = (const int16_t *)(const void *)x;
    for (; c < cols; c++) {
        acc = wrap_add(acc, (int32_t)w[c] * (int32_t)*tail++);
    }
    return acc;
}

static int32_t time_dot_s16_dsp(const int16_t *w, const int16_t *s, int32_t memory, int32_t acc)
{
    int32_t m = 0;
    for (; m + 2 <= memory; m += 2) {
        acc = __smlad((int32_t)mb_load32(w + m), (int32_t)mb_load32(s + m), acc);
    }
    if (m < memory) {
        acc = wrap_add(acc, (int32_t)w[m] * (int32_t)s[m]);
    }
    return acc;
}

static int32_t time_dot_s8_dsp(const int8_t *w, const int8_t *s, int32_t memory, int32_t acc)
{
    int32_t m = 0;
    for (; m + 4 <= memory; m += 4) {
        const uint32_t a = mb_load32(w + m), b = mb_load32(s + m);
        acc = __smlad(mb_even16(a), mb_even16(b), acc);
        acc = __smlad(mb_odd16(a), mb_odd16(b), acc);
    }
    for (; m < memory; m++) {
        acc = wrap_add(acc, (int32_t)w[m] * (int32_t)s[m]);
    }
    return acc;
}
#endif

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

static int32_t feature_dot_mve(const int8_t *w, const int8_t *x, int32_t cols, int32_t acc)
{
    for (int32_t c = 0; c < cols; c += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(cols - c));
        acc = vmladavaq_p_s8(acc, vldrbq_z_s8(w + c, p), vldrbq_z_s8(x + c, p), p);
    }
    return acc;
}

static int32_t time_dot_s16_mve(const int16_t *w, const int16_t *s, int32_t memory, int32_t acc)
{
    for (int32_t m = 0; m < memory; m += 8) {
        const mve_pred16_t p = vctp16q((uint32_t)(memory - m));
        acc = vmladavaq_p_s16(acc, vldrhq_z_s16(w + m, p), vldrhq_z_s16(s + m, p), p);
    }
    return acc;
}

static int32_t time_dot_s8_mve(const int8_t *w, const int8_t *s, int32_t memory, int32_t acc)
{
    return feature_dot_mve(w, s, memory, acc);
}

static void feature_group_mve(const int8_t *w, const void *x, int32_t cols, int32_t *acc)
{
    for (int32_t k = 0; k < 4; k++) {
        acc[k] = feature_dot_mve(w + k * cols, (const int8_t *)x, cols, acc[k]);
    }
}
#endif

/* Every value of the state one place down (the oldest goes; the last slot is overwritten by
 * the caller), 4 bytes per copy: a forward copy reads ahead of what it writes. */
#define MB_SVDF_SHIFT(T)                                                                         \
    static void shift_##T(T *state, int32_t size)                                               \
    {                                                                                            \
        const int32_t per_word = (int32_t)(4 / sizeof(T));                                      \
        int32_t i = 0;                                                                           \
        for (; i + per_word < size; i += per_word) {                                             \
            store32(state + i, mb_load32(state + i + 1));                                        \
        }                                                                                        \
        for (; i + 1 < size; i++) {                                                              \
            state[i] = state[i + 1];                                                             \
        }                                                                                        \
    }

#if defined(__ARM_FEATURE_DSP) || defined(__ARM_FEATURE_MVE)
MB_SVDF_SHIFT(int16_t)
MB_SVDF_SHIFT(int8_t)

/* The newest value of a filter from its weights . (input - zero point) (the fold added):
 * rescaled, clamped, offset, as svdf.c does it. */
#define MB_SVDF_NEWEST(T, LO, HI, acc)                                                           \
    (T)(state_zp + mb_clamp_i32(mb_requantize_fast((acc), m1, s1), LO, HI))

/* One body: T the state type, LO/HI its range, PREPARE (x, cols, buffer) the input as the
 * feature products read it, GROUP four filters' feature products (their weights as the variant
 * arranges them: a group of four rows starts where it did), FEATURE one filter's (the last
 * filters % 4, as stored), TIME a filter's state row . its time weights. */
#define MB_SVDF_FAST_BODY(T, LO, HI, PREPARE, GROUP, FEATURE, TIME)                              \
    const int32_t filters = p->filters, memory = p->memory, input_size = p->input_size;        \
    const int32_t m1 = p->scale1_multiplier, s1 = p->scale1_shift;                             \
    const int32_t m2 = p->scale2_multiplier, s2 = p->scale2_shift;                             \
    const int32_t state_zp = p->state_zero_point, output_zp = p->output_zero_point;            \
    const int32_t *time_folds = folds + filters;                                                \
    shift_##T(state, p->batches * filters * memory);                                            \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const void *x = PREPARE(input + b * input_size, input_size, scratch);                   \
        T *newest = state + b * filters * memory + (memory - 1);                                \
        int32_t f = 0;                                                                          \
        for (; f + 4 <= filters; f += 4) {                                                      \
            int32_t acc[4] = {folds[f], folds[f + 1], folds[f + 2], folds[f + 3]};             \
            GROUP(weights_feature + f * input_size, x, input_size, acc);                        \
            for (int32_t k = 0; k < 4; k++) {                                                   \
                newest[(f + k) * memory] = MB_SVDF_NEWEST(T, LO, HI, acc[k]);                   \
            }                                                                                   \
        }                                                                                       \
        for (; f < filters; f++) {                                                              \
            const int32_t acc = FEATURE(weights_feature + f * input_size, x, input_size,       \
                                        folds[f]);                                              \
            newest[f * memory] = MB_SVDF_NEWEST(T, LO, HI, acc);                                \
        }                                                                                       \
    }                                                                                           \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const T *rows = state + b * filters * memory;                                           \
        int8_t *out = output + b * p->units;                                                    \
        for (int32_t u = 0; u < p->units; u++) {                                                \
            int32_t acc = bias[u];                                                              \
            for (int32_t r = 0; r < p->rank; r++) {                                             \
                const int32_t f = u * p->rank + r;                                              \
                acc = wrap_add(acc, TIME(weights_time + f * memory, rows + f * memory, memory, \
                                         time_folds[f]));                                       \
            }                                                                                   \
            const int32_t y = mb_requantize_fast(acc, m2, s2) + output_zp;                      \
            out[u] = (int8_t)mb_clamp_i32(y, -128, 127);                                        \
        }                                                                                       \
    }
#endif

#if defined(__ARM_FEATURE_DSP)
static const void *prepare_dsp(const int8_t *x, int32_t cols, void *buffer)
{
    return mb_dsp_widen_s8(x, cols, buffer);
}

/* Four filters' rows (arranged as arrange_rows(4, 4) stores a group) . the widened input, onto
 * acc[0..3]: lstm_dsp.c's assembly chunks, then the rows' last cols % 4 bytes. */
static void feature_group_dsp(const int8_t *w, const void *x, int32_t cols, int32_t *acc)
{
    const int32_t full = cols & ~3, tail = cols - full;
    const int32_t *xw = (const int32_t *)x;
    const int8_t *q = (const int8_t *)mb_lstm_dsp_chunks(w, xw, xw + full / 2, acc);
    const int16_t *xt = (const int16_t *)(const void *)(xw + full / 2);
    for (int32_t c = 0; c < tail; c++) {
        for (int32_t k = 0; k < 4; k++) {
            acc[k] = wrap_add(acc[k], (int32_t)q[k * tail + c] * (int32_t)xt[c]);
        }
    }
}

void mb_svdf_s8_s16_dsp(const mb_svdf_params *p, const int8_t *input,
                        const int8_t *weights_feature, const int16_t *weights_time,
                        const int32_t *bias, int16_t *state, int8_t *output,
                        const int32_t *folds, void *scratch)
{
    MB_SVDF_FAST_BODY(int16_t, -32768, 32767, prepare_dsp, feature_group_dsp, feature_dot_dsp,
                      time_dot_s16_dsp)
}

void mb_svdf_s8_s8_dsp(const mb_svdf_params *p, const int8_t *input,
                       const int8_t *weights_feature, const int8_t *weights_time,
                       const int32_t *bias, int8_t *state, int8_t *output,
                       const int32_t *folds, void *scratch)
{
    MB_SVDF_FAST_BODY(int8_t, -128, 127, prepare_dsp, feature_group_dsp, feature_dot_dsp,
                      time_dot_s8_dsp)
}
#endif

#if defined(__ARM_FEATURE_MVE)
static const int8_t *prepare_mve(const int8_t *x, int32_t cols, void *buffer)
{
    (void)cols;
    (void)buffer;
    return x;
}

void mb_svdf_s8_s16_mve(const mb_svdf_params *p, const int8_t *input,
                        const int8_t *weights_feature, const int16_t *weights_time,
                        const int32_t *bias, int16_t *state, int8_t *output,
                        const int32_t *folds, void *scratch)
{
    MB_SVDF_FAST_BODY(int16_t, -32768, 32767, prepare_mve, feature_group_mve, feature_dot_mve,
                      time_dot_s16_mve)
}

void mb_svdf_s8_s8_mve(const mb_svdf_params *p, const int8_t *input,
                       const int8_t *weights_feature, const int8_t *weights_time,
                       const int32_t *bias, int8_t *state, int8_t *output,
                       const int32_t *folds, void *scratch)
{
    MB_SVDF_FAST_BODY(int8_t, -128, 127, prepare_mve, feature_group_mve, feature_dot_mve,
                      time_dot_s8_mve)
}
#endif
