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
 *   instructions per 16 MACs); Helium: VMLADAVA over 16 int8 lanes, four rows sharing each
 *   load of the input, tail-predicated.
 * - The state's shift by one value: 16 bytes per pass (four unaligned word loads, then four
 *   stores: about 2 instructions per word where a word a pass took 5) (DSP) or vector copies
 *   (Helium), not one value at a time.
 * - A unit's time sum: its rank filters' rows are consecutive in the state and in the time
 *   weights, so the sum is one dot product over rank x memory values (SMLAD on the int16 pairs
 *   as stored, int8: SXTB16 first / VMLADAVA over 8 int16 or 16 int8 lanes), and the compiler
 *   sums the rank filters' state folds into one per unit.
 * - Both scales with mb_requantize_fast32 (quant_fast.h: the same result), clamps with SSAT.
 * - Helium only: the rescalings, clamps and stores of four filters (a scatter into their state
 *   slots) or four units at once on 4 int32 lanes (the MVE block below says how).
 * Scratch: the reference's, or 2 x input_size + 8 bytes for the widened input when larger. */
#include <stdint.h>
#include <string.h>

#include "microbuild/asm_function.h"
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

/* A unit's rank x memory state values . its time weights (both runs consecutive), added to acc
 * (wrapping): eight values per pass, then pairs, then the last odd one. Inlined into the units'
 * loop: a call's set-up cost a third of a short run's instructions. */
static inline __attribute__((always_inline)) int32_t time_dot_s16_dsp(const int16_t *w,
                                                                       const int16_t *s,
                                                                       int32_t n, int32_t acc)
{
    const int16_t *const end8 = w + (n & ~7);
    for (; w != end8; w += 8, s += 8) {
        acc = __smlad((int32_t)mb_load32(w), (int32_t)mb_load32(s), acc);
        acc = __smlad((int32_t)mb_load32(w + 2), (int32_t)mb_load32(s + 2), acc);
        acc = __smlad((int32_t)mb_load32(w + 4), (int32_t)mb_load32(s + 4), acc);
        acc = __smlad((int32_t)mb_load32(w + 6), (int32_t)mb_load32(s + 6), acc);
    }
    for (int32_t m = n & ~7; m + 2 <= n; m += 2, w += 2, s += 2) {
        acc = __smlad((int32_t)mb_load32(w), (int32_t)mb_load32(s), acc);
    }
    if (n & 1) {
        acc = wrap_add(acc, (int32_t)*w * (int32_t)*s);
    }
    return acc;
}

static inline __attribute__((always_inline)) int32_t time_dot_s8_dsp(const int8_t *w,
                                                                      const int8_t *s,
                                                                      int32_t n, int32_t acc)
{
    const int8_t *const end8 = w + (n & ~7);
    for (; w != end8; w += 8, s += 8) {
        const uint32_t a0 = mb_load32(w), b0 = mb_load32(s);
        const uint32_t a1 = mb_load32(w + 4), b1 = mb_load32(s + 4);
        acc = __smlad(mb_even16(a0), mb_even16(b0), acc);
        acc = __smlad(mb_odd16(a0), mb_odd16(b0), acc);
        acc = __smlad(mb_even16(a1), mb_even16(b1), acc);
        acc = __smlad(mb_odd16(a1), mb_odd16(b1), acc);
    }
    for (int32_t m = n & ~7; m < n; m++, w++, s++) {
        acc = wrap_add(acc, (int32_t)*w * (int32_t)*s);
    }
    return acc;
}

/* dsp_wide, int8 state: the time weights widened to int16 at compile time (svdf.py:
 * _arrange_time_wide), each unit's run in chunks of four stored w0 w2 w1 w3, the words that
 * pair with SXTB16's halves of a state word, then the run's last run % 4 weights plain: per 4
 * values one state load, 2 SXTB16, one LDRD of weights and 2 SMLAD (4 SXTB16 fewer than int8
 * weights per 8 values). */
static inline __attribute__((always_inline)) int32_t time_dot_s8_wide(const int16_t *w,
                                                                       const int8_t *s,
                                                                       int32_t n, int32_t acc)
{
    const int16_t *const end4 = w + (n & ~3);
    for (; w != end4; w += 4, s += 4) {
        const uint32_t x = mb_load32(s);
        acc = __smlad((int32_t)mb_load32(w), mb_even16(x), acc);
        acc = __smlad((int32_t)mb_load32(w + 2), mb_odd16(x), acc);
    }
    for (int32_t m = n & ~3; m < n; m++, w++, s++) {
        acc = wrap_add(acc, (int32_t)*w * (int32_t)*s);
    }
    return acc;
}

static inline __attribute__((always_inline)) int32_t time_dot8_s8_wide(const int16_t *w,
                                                                        const int8_t *s,
                                                                        int32_t n, int32_t acc)
{
    const int16_t *const end = w + n;
    do {
        const uint32_t x0 = mb_load32(s), x1 = mb_load32(s + 4);
        acc = __smlad((int32_t)mb_load32(w), mb_even16(x0), acc);
        acc = __smlad((int32_t)mb_load32(w + 2), mb_odd16(x0), acc);
        acc = __smlad((int32_t)mb_load32(w + 4), mb_even16(x1), acc);
        acc = __smlad((int32_t)mb_load32(w + 6), mb_odd16(x1), acc);
        w += 8;
        s += 8;
    } while (w != end);
    return acc;
}

/* time_dot_*_dsp for a run of a multiple of 8 values (every memory of 8, 16, 32...): no tail
 * code, so the units' loop keeps its pointers in registers. */
static inline __attribute__((always_inline)) int32_t time_dot8_s16_dsp(const int16_t *w,
                                                                        const int16_t *s,
                                                                        int32_t n, int32_t acc)
{
    const int16_t *const end = w + n;
    do {
        acc = __smlad((int32_t)mb_load32(w), (int32_t)mb_load32(s), acc);
        acc = __smlad((int32_t)mb_load32(w + 2), (int32_t)mb_load32(s + 2), acc);
        acc = __smlad((int32_t)mb_load32(w + 4), (int32_t)mb_load32(s + 4), acc);
        acc = __smlad((int32_t)mb_load32(w + 6), (int32_t)mb_load32(s + 6), acc);
        w += 8;
        s += 8;
    } while (w != end);
    return acc;
}
#endif


/* The state one value (`step` bytes) down, the oldest value of the buffer gone (the caller
 * overwrites each row's last slot): 16 bytes per pass, the four (unaligned) loads before the
 * four stores, each load reading ahead of every store; then words, then bytes. */
#if defined(__ARM_FEATURE_DSP)
#if defined(__thumb2__) && !defined(MB_CONV2D_DSP_C_BLOCKS)
/* blocks x 32 bytes from `from` (any alignment: LDR takes unaligned addresses) down to `to`
 * (word-aligned, below from: each pass loads before it stores). blocks >= 1. */
void mb_svdf_shift_blocks(const void *from, void *to, int32_t blocks);
__asm__(MB_THUMB_FUNCTION_BEGIN("mb_svdf_shift_blocks")
        "push   {r4, r5, r6, r7, r8, r9, r10, lr}\n"
        ".Lmb_svdf_shift_block:\n\t"
        "ldr    r3, [r0]\n\t"
        "ldr    r4, [r0, #4]\n\t"
        "ldr    r5, [r0, #8]\n\t"
        "ldr    r6, [r0, #12]\n\t"
        "ldr    r7, [r0, #16]\n\t"
        "ldr    r8, [r0, #20]\n\t"
        "ldr    r9, [r0, #24]\n\t"
        "ldr    r10, [r0, #28]\n\t"
        "adds   r0, r0, #32\n\t"
        "stmia  r1!, {r3, r4, r5, r6, r7, r8, r9, r10}\n\t"
        "subs   r2, r2, #1\n\t"
        "bne    .Lmb_svdf_shift_block\n\t"
        "pop    {r4, r5, r6, r7, r8, r9, r10, pc}\n\t"
        MB_THUMB_FUNCTION_END("mb_svdf_shift_blocks"));
#endif
static void shift_dsp(void *state, int32_t bytes, int32_t step)
{
    uint8_t *s = (uint8_t *)state;
    const int32_t moved = bytes - step;
    int32_t i = 0;
#if defined(__thumb2__) && !defined(MB_CONV2D_DSP_C_BLOCKS)
    if (((uintptr_t)s & 3) == 0 && moved >= 32) {
        /* A word-aligned state (the planner's usual): 32 bytes per pass, eight unaligned LDR
         * then one STM (12 instructions where the word-wise C loop below takes about 22). */
        const int32_t blocks = moved / 32;
        mb_svdf_shift_blocks(s + step, s, blocks);
        i = 32 * blocks;
    }
#endif
    for (; i + 16 <= moved; i += 16) {
        const uint32_t a = mb_load32(s + i + step), b = mb_load32(s + i + step + 4);
        const uint32_t c = mb_load32(s + i + step + 8), d = mb_load32(s + i + step + 12);
        store32(s + i, a);
        store32(s + i + 4, b);
        store32(s + i + 8, c);
        store32(s + i + 12, d);
    }
    for (; i + 4 <= moved; i += 4) {
        store32(s + i, mb_load32(s + i + step));
    }
    for (; i < moved; i++) {
        s[i] = s[i + step];
    }
}
#endif

#if defined(__ARM_FEATURE_DSP)
/* The newest value of a filter from its weights . (input - zero point) (the fold added):
 * rescaled, clamped to the state's BITS-bit range, offset, as svdf.c does it. The shift is a
 * run-time value: mb_requantize_fast32's 32-bit rounding and one SSAT take about half the
 * instructions of the 64-bit shift and the compare-and-select clamp. */
#define MB_SVDF_NEWEST(T, BITS, acc)                                                             \
    (T)(state_zp + __ssat(mb_requantize_fast32((acc), m1, s1), BITS))

#define MB_SVDF_UNITS 16

/* One body: T the state type, BITS its width, PREPARE (x, cols, buffer) the input as the
 * feature products read it, GROUP four filters' feature products (their weights as the variant
 * arranges them, WBYTES bytes a weight: a group of four rows starts where it did), FEATURE one
 * filter's (the last filters % 4, as stored), TIME a unit's run of state values . its time
 * weights. */
#define MB_SVDF_FAST_BODY(T, BITS, PREPARE, GROUP, FEATURE, TIME, WBYTES, TW)                    \
    const int32_t filters = p->filters, memory = p->memory, input_size = p->input_size;        \
    const int32_t m1 = p->scale1_multiplier, s1 = p->scale1_shift;                             \
    const int32_t m2 = p->scale2_multiplier, s2 = p->scale2_shift;                             \
    const int32_t state_zp = p->state_zero_point, output_zp = p->output_zero_point;            \
    const int32_t *unit_folds = folds + filters;                                                \
    shift_dsp(state, p->batches * filters * memory * (int32_t)sizeof(T), (int32_t)sizeof(T));   \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const void *x = PREPARE(input + b * input_size, input_size, scratch);                   \
        T *newest = state + b * filters * memory + (memory - 1);                                \
        int32_t f = 0;                                                                          \
        for (; f + 4 <= filters; f += 4) {                                                      \
            int32_t acc[4] = {folds[f], folds[f + 1], folds[f + 2], folds[f + 3]};             \
            GROUP(weights_feature + f * input_size * WBYTES, x, input_size, acc);             \
            for (int32_t k = 0; k < 4; k++) {                                                   \
                newest[(f + k) * memory] = MB_SVDF_NEWEST(T, BITS, acc[k]);                      \
            }                                                                                   \
        }                                                                                       \
        for (; f < filters; f++) {                                                              \
            const int32_t acc = FEATURE(weights_feature + f * input_size * WBYTES, x,          \
                                        input_size,                                             \
                                        folds[f]);                                              \
            newest[f * memory] = MB_SVDF_NEWEST(T, BITS, acc);                                   \
        }                                                                                       \
    }                                                                                           \
    const int32_t run = p->rank * memory; /* a unit's filters' values, consecutive */          \
    const int32_t units = p->units;                                                             \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const T *rows = state + b * filters * memory;                                           \
        const TW *w = (const TW *)(const void *)weights_time;                                    \
        int8_t *out = output + b * units;                                                       \
        /* MB_SVDF_UNITS units' sums, then their rescaling: each loop keeps its own values in   \
         * registers (one loop over both spilled the rescaling's constants every unit). */      \
        for (int32_t u = 0; u < units; u += MB_SVDF_UNITS) {                                    \
            const int32_t n = units - u < MB_SVDF_UNITS ? units - u : MB_SVDF_UNITS;            \
            int32_t sums[MB_SVDF_UNITS];                                                        \
            for (int32_t k = 0; k < n; k++, rows += run, w += run) {                            \
                sums[k] = TIME(w, rows, run, wrap_add(bias[u + k], unit_folds[u + k]));         \
            }                                                                                   \
            for (int32_t k = 0; k < n; k++) {                                                   \
                const int32_t y = mb_requantize_fast32(sums[k], m2, s2) + output_zp;            \
                out[u + k] = (int8_t)__ssat(y, 8);                                              \
            }                                                                                   \
        }                                                                                       \
    }
#endif

#if defined(__ARM_FEATURE_DSP)
static const void *prepare_dsp(const int8_t *x, int32_t cols, void *buffer)
{
    return mb_dsp_widen_s8(x, cols, buffer);
}

/* Four filters' rows (a group as the variant arranges it, W its weight type) . the widened input,
 * onto acc[0..3]: CHUNKS, lstm_dsp.c's assembly loop over the whole chunks, then the rows' last
 * cols % 4 weights, row after row. */
#define MB_SVDF_FEATURE_GROUP(NAME, W, CHUNKS)                                                   \
    static void NAME(const int8_t *w, const void *x, int32_t cols, int32_t *acc)               \
    {                                                                                            \
        const int32_t full = cols & ~3, tail = cols - full;                                      \
        const int32_t *xw = (const int32_t *)x;                                                  \
        const W *q = (const W *)CHUNKS(w, xw, xw + full / 2, acc);                               \
        const int16_t *xt = (const int16_t *)(const void *)(xw + full / 2);                     \
        for (int32_t c = 0; c < tail; c++) {                                                     \
            for (int32_t k = 0; k < 4; k++) {                                                   \
                acc[k] = wrap_add(acc[k], (int32_t)q[k * tail + c] * (int32_t)xt[c]);           \
            }                                                                                   \
        }                                                                                       \
    }

/* dsp: the groups as arrange_rows(4, 4) stores them (int8, SXTB16 in the loop). */
MB_SVDF_FEATURE_GROUP(feature_group_dsp, int8_t, mb_lstm_dsp_chunks)

/* A DSP variant's entry point: T the state type, BITS its width, GROUP and FEATURE
 * the feature products on the variant's weights (WBYTES bytes a weight), TIME the time dot. */
#define MB_SVDF_DSP_ENTRY(NAME, T, BITS, GROUP, FEATURE, TIME, WBYTES, TW, FIRST)                \
    void NAME(const mb_svdf_params *p, const int8_t *input, const int8_t *weights_feature,      \
              const T *weights_time, const int32_t *bias, T *state, int8_t *output,             \
              const int32_t *folds, void *scratch)                                               \
    {                                                                                            \
        FIRST                                                                                    \
        MB_SVDF_FAST_BODY(T, BITS, prepare_dsp, GROUP, FEATURE, TIME, WBYTES, TW)                \
    }

MB_SVDF_DSP_ENTRY(mb_svdf_s8_s16_dsp, int16_t, 16, feature_group_dsp, feature_dot_dsp,
                  time_dot_s16_dsp, 1, int16_t, )
MB_SVDF_DSP_ENTRY(mb_svdf_s8_s8_dsp, int8_t, 8, feature_group_dsp, feature_dot_dsp,
                  time_dot_s8_dsp, 1, int8_t, )

/* dsp_wide: the feature weights widened to int16 at compile time by FULLY_CONNECTED's
 * arrange_dsp_wide (arrange_rows(4, 4) with every whole chunk stored w0 w2 w1 w3 as int16, the
 * words (w0, w2) and (w1, w3) that pair with the widened input's): per chunk of four rows, one
 * LDRD of the input, four of the weights and 8 SMLAD (lstm_dsp.c's wide assembly loop). */
MB_SVDF_FEATURE_GROUP(feature_group_dsp_wide, int16_t, mb_lstm_dsp_wide_chunks)

/* A left-over filter's row (filters % 4): whole chunks permuted and widened, the tail plain. */
static int32_t feature_dot_dsp_wide(const int8_t *w, const int32_t *x, int32_t cols, int32_t acc)
{
    const int16_t *row = (const int16_t *)(const void *)w;
    const int32_t full = cols & ~3;
    for (int32_t c = 0; c < full; c += 4, x += 2) {
        acc = __smlad((int32_t)mb_load32(row + c), x[0], acc);
        acc = __smlad((int32_t)mb_load32(row + c + 2), x[1], acc);
    }
    const int16_t *tail = (const int16_t *)(const void *)x;
    for (int32_t c = full; c < cols; c++) {
        acc = wrap_add(acc, (int32_t)row[c] * (int32_t)*tail++);
    }
    return acc;
}

/* The rescalings of a block of n sums, plus zp: with mb_rescale_small (dsp_words.h) when the
 * compiler bounds them (SMALL, a bit of params.small_sums; zp then rides in the rounding
 * constant, half + zp x 2^r, exact before the arithmetic shift: the compiler sets the bit only
 * for r <= 22, where that cannot overflow), else mb_requantize_fast32 with shift s; what is
 * tested, once per block, not per value. SINK(k, v) takes sum k rescaled. */
#define MB_SVDF_RESCALE_SMALL(sums, n, SMALL, m, s, l, half, r, zp, SINK)                        \
    if (!(SMALL)) {                                                                              \
        for (int32_t k = 0; k < (n); k++) {                                                      \
            SINK(k, mb_requantize_fast32((sums)[k], (m), (s)) + (zp));                           \
        }                                                                                       \
    } else if ((r) > 0) {                                                                        \
        const int32_t half_zp = (half) + (int32_t)((uint32_t)(zp) << (r));                       \
        for (int32_t k = 0; k < (n); k++) {                                                      \
            SINK(k, mb_rescale_small((sums)[k], (l), (m), half_zp, (r)));                        \
        }                                                                                       \
    } else {                                                                                     \
        for (int32_t k = 0; k < (n); k++) {                                                      \
            SINK(k, mb_smmulr((sums)[k] << (l), (m)) + (zp));                                    \
        }                                                                                       \
    }

/* Filters or units per block of the body below: its int32 sums on the stack (512 bytes). */
#define MB_SVDF_WIDE_BLOCK 64

/* dsp_wide on rows of whole chunks (input_size % 4 == 0): the feature products of
 * MB_SVDF_WIDE_BLOCK filters in one call of lstm_dsp.c's grouped loop (the folds are its
 * biases), and
 * the rescalings the compiler bounds (params.small_sums) with SMMULR (5 instructions where
 * mb_requantize_fast32 takes about 12). The rest is MB_SVDF_FAST_BODY's. */
#define MB_SVDF_WIDE_SMALL(NAME, T, BITS, TIME, TIME8, TW)                                       \
    static void NAME(const mb_svdf_params *p, const int8_t *input,                              \
                     const int8_t *weights_feature, const T *weights_time, const int32_t *bias, \
                     T *state, int8_t *output, const int32_t *folds, void *scratch)            \
    {                                                                                            \
        typedef T state_type; /* for MB_SVDF_TO_STATE */                                        \
        enum { state_bits = BITS };                                                             \
        const int32_t filters = p->filters, memory = p->memory, input_size = p->input_size;    \
        const int32_t m1 = p->scale1_multiplier, s1 = p->scale1_shift;                         \
        const int32_t m2 = p->scale2_multiplier, s2 = p->scale2_shift;                         \
        const int32_t l1 = 1 + (s1 > 0 ? s1 : 0), r1 = s1 < 0 ? -s1 : 0;                      \
        const int32_t l2 = 1 + (s2 > 0 ? s2 : 0), r2 = s2 < 0 ? -s2 : 0;                      \
        const int32_t half1 = (int32_t)((uint32_t)1 << r1) >> 1, half2 = (int32_t)((uint32_t)1 << r2) >> 1;      \
        const int32_t small1 = p->small_sums & 1, small2 = p->small_sums & 2;                  \
        const int32_t state_zp = p->state_zero_point, output_zp = p->output_zero_point;        \
        const int32_t *unit_folds = folds + filters;                                            \
        shift_dsp(state, p->batches * filters * memory * (int32_t)sizeof(T),                    \
                  (int32_t)sizeof(T));                                                          \
        for (int32_t b = 0; b < p->batches; b++) {                                              \
            const int32_t *x = (const int32_t *)prepare_dsp(input + b * input_size, input_size, \
                                                            scratch);                           \
            T *newest = state + b * filters * memory + (memory - 1);                            \
            for (int32_t f = 0; f < filters; f += MB_SVDF_WIDE_BLOCK) {                          \
                const int32_t n =                                                                \
                    filters - f < MB_SVDF_WIDE_BLOCK ? filters - f : MB_SVDF_WIDE_BLOCK;         \
                const int32_t groups = n / 4;                                                   \
                const int16_t *w = (const int16_t *)(const void *)weights_feature             \
                                   + f * input_size;                                            \
                int32_t acc[MB_SVDF_WIDE_BLOCK];                                                 \
                if (groups > 0) {                                                               \
                    mb_lstm_dsp_wide_groups(w, x, 2 * input_size, groups, folds + f, acc);      \
                }                                                                               \
                for (int32_t k = 4 * groups; k < n; k++) {                                      \
                    acc[k] = feature_dot_dsp_wide(                                               \
                        (const int8_t *)(const void *)(w + k * input_size),                      \
                        x, input_size, folds[f + k]);                                            \
                }                                                                               \
                T *slot = newest + f * memory;                                                  \
                MB_SVDF_RESCALE_SMALL(acc, n, small1, m1, s1, l1, half1, r1, 0, MB_SVDF_TO_STATE) \
            }                                                                                   \
        }                                                                                       \
        const int32_t run = p->rank * memory;                                                   \
        const int32_t units = p->units;                                                         \
        for (int32_t b = 0; b < p->batches; b++) {                                              \
            const T *rows = state + b * filters * memory;                                       \
            const TW *w = (const TW *)(const void *)weights_time;                                \
            int8_t *out = output + b * units;                                                   \
            for (int32_t u = 0; u < units; u += MB_SVDF_WIDE_BLOCK, out += MB_SVDF_WIDE_BLOCK) { \
                const int32_t n = units - u < MB_SVDF_WIDE_BLOCK ? units - u : MB_SVDF_WIDE_BLOCK; \
                int32_t sums[MB_SVDF_WIDE_BLOCK];                                                \
                if ((run & 7) == 0) {                                                           \
                    for (int32_t k = 0; k < n; k++, rows += run, w += run) {                    \
                        sums[k] = TIME8(w, rows, run, wrap_add(bias[u + k], unit_folds[u + k])); \
                    }                                                                           \
                } else {                                                                        \
                    for (int32_t k = 0; k < n; k++, rows += run, w += run) {                    \
                        sums[k] = TIME(w, rows, run, wrap_add(bias[u + k], unit_folds[u + k])); \
                    }                                                                           \
                }                                                                               \
                MB_SVDF_RESCALE_SMALL(sums, n, small2, m2, s2, l2, half2, r2, output_zp,         \
                                      MB_SVDF_TO_OUTPUT)                                         \
            }                                                                                   \
        }                                                                                       \
    }
#define MB_SVDF_TO_STATE(k, v) slot[(k) * memory] = (state_type)(state_zp + __ssat((v), state_bits))
#define MB_SVDF_TO_OUTPUT(k, v) out[k] = (int8_t)__ssat((v), 8)

MB_SVDF_WIDE_SMALL(wide_small_s16, int16_t, 16, time_dot_s16_dsp, time_dot8_s16_dsp, int16_t)
MB_SVDF_WIDE_SMALL(wide_small_s8, int8_t, 8, time_dot_s8_wide, time_dot8_s8_wide, int16_t)

/* The grouped loop wants rows of whole chunks. */
#define MB_SVDF_WIDE_SMALL_FIRST(SMALL)                                                          \
    if ((p->input_size & 3) == 0) {                                            \
        SMALL(p, input, weights_feature, weights_time, bias, state, output, folds, scratch);    \
        return;                                                                                 \
    }

MB_SVDF_DSP_ENTRY(mb_svdf_s8_s16_dsp_wide, int16_t, 16, feature_group_dsp_wide,
                  feature_dot_dsp_wide, time_dot_s16_dsp, 2, int16_t,
                  MB_SVDF_WIDE_SMALL_FIRST(wide_small_s16))
MB_SVDF_DSP_ENTRY(mb_svdf_s8_s8_dsp_wide, int8_t, 8, feature_group_dsp_wide,
                  feature_dot_dsp_wide, time_dot_s8_wide, 2, int16_t,
                  MB_SVDF_WIDE_SMALL_FIRST(wide_small_s8))
#endif

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

#include "microbuild/kernels/requantize_mve.h"

/* Helium: four filters or units per pass on 4 int32 lanes, the scalar body's arithmetic lane by
 * lane. VMLADAVA sums wrap modulo 2^32 as wrap_add does; mb_mve_requantize_any is
 * mb_requantize_fast per lane (requantize_mve.h).
 * - the state's shift by one value: a forward vector copy (each load reads ahead of the stores);
 * - the newest value of four filters: their rows (as stored) . the input, 16 int8 lanes per
 *   VMLADAVA sharing each load of the input, the folds added, rescaled, clamped and offset on
 *   4 lanes, stored with one scatter (the four filters' slots are `memory` apart);
 * - four units' outputs: each unit's run of rank x memory state values . its time weights
 *   (VMLADAVA over 8 int16 or 16 int8 lanes, the four units' dots in one loop), rescaled and
 *   clamped on 4 lanes. */

/* The four lanes of a vector from four sums. */
static inline int32x4_t lanes4(int32_t a0, int32_t a1, int32_t a2, int32_t a3)
{
    int32x4_t v = vdupq_n_s32(a0);
    v = vsetq_lane_s32(a1, v, 1);
    v = vsetq_lane_s32(a2, v, 2);
    return vsetq_lane_s32(a3, v, 3);
}

/* Rows first .. first + n - 1 (n <= 4) of w . x, lanes >= n zero. */
static inline __attribute__((always_inline)) int32x4_t
feature_rows_mve(const int8_t *w, const int8_t *x, int32_t cols, int32_t n)
{
    int32_t a[4] = {0, 0, 0, 0};
    const int8_t *r1 = w + (n > 1 ? cols : 0), *r2 = w + (n > 2 ? 2 * cols : 0);
    const int8_t *r3 = w + (n > 3 ? 3 * cols : 0); /* rows past n: row 0 again, lane dropped */
    int32_t c = 0;
    for (; c + 16 <= cols; c += 16) { /* whole vectors: no VPST per instruction */
        const int8x16_t v = vldrbq_s8(x + c);
        a[0] = vmladavaq_s8(a[0], v, vldrbq_s8(w + c));
        a[1] = vmladavaq_s8(a[1], v, vldrbq_s8(r1 + c));
        a[2] = vmladavaq_s8(a[2], v, vldrbq_s8(r2 + c));
        a[3] = vmladavaq_s8(a[3], v, vldrbq_s8(r3 + c));
    }
    if (c < cols) {
        const mve_pred16_t p = vctp8q((uint32_t)(cols - c));
        const int8x16_t v = vldrbq_z_s8(x + c, p);
        a[0] = vmladavaq_p_s8(a[0], v, vldrbq_z_s8(w + c, p), p);
        a[1] = vmladavaq_p_s8(a[1], v, vldrbq_z_s8(r1 + c, p), p);
        a[2] = vmladavaq_p_s8(a[2], v, vldrbq_z_s8(r2 + c, p), p);
        a[3] = vmladavaq_p_s8(a[3], v, vldrbq_z_s8(r3 + c, p), p);
    }
    return lanes4(a[0], a[1], a[2], a[3]);
}

/* Four units' sums at once (units first .. first + n - 1, n <= 4; lanes >= n zero): each unit's
 * run of `run` state values . its time weights, the four runs consecutive in both (one load of
 * each per LANES values, four VMLADAVA accumulators kept in registers: one call a unit with its
 * own loop setup and the sums gathered through the stack cost about 20 instructions a unit
 * where this costs about 4 for run = LANES). LOAD / LOAD_Z / VCTP: the whole-vector load, its
 * zeroing form and the tail predicate of T. */
#define MB_SVDF_TIME_ROWS_MVE(NAME, T, LANES, LOAD, LOAD_Z, VCTP)                                \
    static inline int32x4_t time_rows_##NAME##_mve(const T *w, const T *s, int32_t run,         \
                                                   int32_t n)                                    \
    {                                                                                            \
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                                  \
        /* units past n: unit 0's run again, its lane dropped by the caller's predicate */       \
        const int32_t o1 = n > 1 ? run : 0, o2 = n > 2 ? 2 * run : 0, o3 = n > 3 ? 3 * run : 0; \
        int32_t m = 0;                                                                           \
        for (; m + LANES <= run; m += LANES) {                                                   \
            a0 = vmladavaq(a0, LOAD(w + m), LOAD(s + m));                                        \
            a1 = vmladavaq(a1, LOAD(w + o1 + m), LOAD(s + o1 + m));                              \
            a2 = vmladavaq(a2, LOAD(w + o2 + m), LOAD(s + o2 + m));                              \
            a3 = vmladavaq(a3, LOAD(w + o3 + m), LOAD(s + o3 + m));                              \
        }                                                                                       \
        if (m < run) {                                                                           \
            const mve_pred16_t p = VCTP((uint32_t)(run - m));                                    \
            a0 = vmladavaq_p(a0, LOAD_Z(w + m, p), LOAD_Z(s + m, p), p);                         \
            a1 = vmladavaq_p(a1, LOAD_Z(w + o1 + m, p), LOAD_Z(s + o1 + m, p), p);               \
            a2 = vmladavaq_p(a2, LOAD_Z(w + o2 + m, p), LOAD_Z(s + o2 + m, p), p);               \
            a3 = vmladavaq_p(a3, LOAD_Z(w + o3 + m, p), LOAD_Z(s + o3 + m, p), p);               \
        }                                                                                       \
        return lanes4(a0, a1, a2, a3);                                                           \
    }

MB_SVDF_TIME_ROWS_MVE(s16, int16_t, 8, vldrhq_s16, vldrhq_z_s16, vctp16q)
MB_SVDF_TIME_ROWS_MVE(s8, int8_t, 16, vldrbq_s8, vldrbq_z_s8, vctp8q)

/* The state one value (`step` bytes) down, as bytes: four vectors per pass (their loads before
 * their stores), whole vectors, then the predicated rest; each load reads ahead of the stores. */
static void shift_mve(void *state, int32_t bytes, int32_t step)
{
    uint8_t *s = (uint8_t *)state;
    const int32_t moved = bytes - step;
    int32_t i = 0;
    for (; i + 64 <= moved; i += 64) {
        const uint8x16_t a = vldrbq_u8(s + i + step), b = vldrbq_u8(s + i + step + 16);
        const uint8x16_t c = vldrbq_u8(s + i + step + 32), d = vldrbq_u8(s + i + step + 48);
        vstrbq_u8(s + i, a);
        vstrbq_u8(s + i + 16, b);
        vstrbq_u8(s + i + 32, c);
        vstrbq_u8(s + i + 48, d);
    }
    for (; i + 16 <= moved; i += 16) {
        vstrbq_u8(s + i, vldrbq_u8(s + i + step));
    }
    if (i < moved) {
        const mve_pred16_t p = vctp8q((uint32_t)(moved - i));
        vstrbq_p_u8(s + i, vldrbq_z_u8(s + i + step, p), p);
    }
}

/* The four filters' newest values into their slots `memory` apart (lanes under p). */
static inline void store_newest_s16(int16_t *newest, uint32x4_t slots, int32x4_t v,
                                    mve_pred16_t p)
{
    vstrhq_scatter_shifted_offset_p_s32(newest, slots, v, p);
}

static inline void store_newest_s8(int8_t *newest, uint32x4_t slots, int32x4_t v,
                                   mve_pred16_t p)
{
    vstrbq_scatter_offset_p_s32(newest, slots, v, p);
}

/* T the state type (s16 / s8 in the helpers' names), LO/HI its range. */
#define MB_SVDF_MVE_BODY(T, NAME, LO, HI)                                                         \
    const int32_t filters = p->filters, memory = p->memory, input_size = p->input_size;        \
    const int32_t units = p->units, rank = p->rank;                                             \
    const mb_mve_requant scale1 = mb_mve_requant_of(p->scale1_multiplier, p->scale1_shift);     \
    const mb_mve_requant scale2 = mb_mve_requant_of(p->scale2_multiplier, p->scale2_shift);     \
    const int32_t state_zp = p->state_zero_point, output_zp = p->output_zero_point;            \
    const int32_t *unit_folds = folds + filters;                                                \
    const int32_t run = rank * memory; /* a unit's filters' values, consecutive */             \
    const uint32x4_t slots = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)memory);                 \
    (void)scratch;                                                                              \
    shift_mve(state, p->batches * filters * memory * (int32_t)sizeof(T), (int32_t)sizeof(T));   \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const int8_t *x = input + b * input_size;                                               \
        T *newest = state + b * filters * memory + (memory - 1);                                \
        for (int32_t f = 0; f < filters; f += 4) {                                              \
            const int32_t n = filters - f < 4 ? filters - f : 4;                                \
            const mve_pred16_t keep = vctp32q((uint32_t)n);                                     \
            const int32x4_t acc = vaddq_s32(                                                    \
                feature_rows_mve(weights_feature + f * input_size, x, input_size, n),           \
                vldrwq_z_s32(folds + f, keep));                                                 \
            const int32x4_t v = mb_mve_requantize_any(acc, scale1);                             \
            const int32x4_t clamped = vminq_s32(vmaxq_s32(v, vdupq_n_s32(LO)), vdupq_n_s32(HI)); \
            store_newest_##NAME(newest + f * memory, slots, vaddq_n_s32(clamped, state_zp),     \
                                keep);                                                          \
        }                                                                                       \
    }                                                                                           \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const T *rows = state + b * filters * memory;                                           \
        int8_t *out = output + b * units;                                                       \
        for (int32_t u = 0; u < units; u += 4) {                                                \
            const int32_t n = units - u < 4 ? units - u : 4;                                    \
            const mve_pred16_t keep = vctp32q((uint32_t)n);                                     \
            const int32_t at = u * run;                                                         \
            const int32x4_t acc = vaddq_s32(                                                    \
                time_rows_##NAME##_mve(weights_time + at, rows + at, run, n),                   \
                vaddq_s32(vldrwq_z_s32(unit_folds + u, keep), vldrwq_z_s32(bias + u, keep)));   \
            const int32x4_t y = vaddq_n_s32(mb_mve_requantize_any(acc, scale2), output_zp);     \
            vstrbq_p_s32(out + u, vminq_s32(vmaxq_s32(y, vdupq_n_s32(-128)),                    \
                                            vdupq_n_s32(127)), keep);                           \
        }                                                                                       \
    }

void mb_svdf_s8_s16_mve(const mb_svdf_params *p, const int8_t *input,
                        const int8_t *weights_feature, const int16_t *weights_time,
                        const int32_t *bias, int16_t *state, int8_t *output,
                        const int32_t *folds, void *scratch)
{
    MB_SVDF_MVE_BODY(int16_t, s16, -32768, 32767)
}

void mb_svdf_s8_s8_mve(const mb_svdf_params *p, const int8_t *input,
                       const int8_t *weights_feature, const int8_t *weights_time,
                       const int32_t *bias, int8_t *state, int8_t *output,
                       const int32_t *folds, void *scratch)
{
    MB_SVDF_MVE_BODY(int8_t, s8, -128, 127)
}
#endif
