/* FULLY_CONNECTED, Arm DSP variant "dsp" (Cortex-M4/M7/M33/M55): SMLAD on sign-extended pairs,
 * four output rows per pass over the input.
 *
 * Weights are pre-arranged at compile time (arrange_rows(4, 4)): for every group of four rows,
 * the whole 4-byte chunks of the depth come chunk by chunk, each chunk holding the four rows'
 * 4 bytes one after the other ([depth / 4][4 rows][4]); then the group's last depth % 4 bytes,
 * row after row ([4 rows][depth % 4]); rows left over (output_depth % 4) follow as stored.
 * Same size as the original weights.
 *
 * One 32-bit load brings 4 int8 values; SXTB16 sign-extends bytes 0 and 2 into two int16 halves,
 * SXTB16 with ROR #8 bytes 1 and 3. The input word is split once and feeds all four rows, whose
 * words are split the same way, so SMLAD adds x0*w0 + x2*w2 and x1*w1 + x3*w3: int8 x int8
 * products summed in int32, exactly as the reference (in another order). */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/kernels/fully_connected_requantize.h"
#include "microbuild/quant.h"

static inline uint32_t fc_load32(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

static inline int32_t fc_even(uint32_t v)
{
    return (int32_t)__sxtb16((int32_t)v);
}

/* Bytes 1 and 3: SXTB16 with its own ROR #8 (GCC 12 would not fold a separate rotate). */
static inline int32_t fc_odd(uint32_t v)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

/* Two words of weights: any alignment (two LDR), or 8-byte aligned (one LDRD). */
static inline void fc_load2(const int8_t *p, uint32_t *a, uint32_t *b)
{
    *a = fc_load32(p);
    *b = fc_load32(p + 4);
}

static inline void fc_load2_aligned(const int8_t *p, uint32_t *a, uint32_t *b)
{
    uint64_t v;
    memcpy(&v, __builtin_assume_aligned(p, 8), 8);
    *a = (uint32_t)v;
    *b = (uint32_t)(v >> 32);
}

/* One 4-byte chunk of the input against the four rows' chunks (16 MACs). */
#define FC_DSP_CHUNK4(k, LOAD2)                                                                   \
    {                                                                                             \
        const uint32_t xv = fc_load32(x + 4 * (k));                                               \
        const int32_t xe = fc_even(xv);                                                           \
        const int32_t xo = fc_odd(xv);                                                            \
        uint32_t w0, w1, w2, w3;                                                                  \
        LOAD2(w + 16 * (k), &w0, &w1);                                                            \
        LOAD2(w + 16 * (k) + 8, &w2, &w3);                                                        \
        acc0 = __smlad(fc_even(w0), xe, acc0);                                                    \
        acc0 = __smlad(fc_odd(w0), xo, acc0);                                                     \
        acc1 = __smlad(fc_even(w1), xe, acc1);                                                    \
        acc1 = __smlad(fc_odd(w1), xo, acc1);                                                     \
        acc2 = __smlad(fc_even(w2), xe, acc2);                                                    \
        acc2 = __smlad(fc_odd(w2), xo, acc2);                                                     \
        acc3 = __smlad(fc_even(w3), xe, acc3);                                                    \
        acc3 = __smlad(fc_odd(w3), xo, acc3);                                                     \
    }

/* GCC's pre-allocation scheduling hoists all loads of the unrolled loop and spills accumulators
 * on Cortex-M4; without it the loop stays in registers. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-schedule-insns")))
#endif
void mb_fully_connected_s8_dsp(const mb_fully_connected_s8_params *params, const int8_t *input,
                               const int8_t *weights, const int32_t *bias, int8_t *output,
                               void *scratch)
{
    const int32_t depth = params->input_depth;
    const int32_t out_depth = params->output_depth;
    const int32_t groups = out_depth / 4;
    const int32_t chunks = depth / 4;
    const int32_t tail = depth - chunks * 4;
    const int aligned = ((uintptr_t)weights & 7u) == 0 && (depth & 1) == 0;
    (void)scratch;
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x_row = input + b * depth;
        int8_t *y = output + b * out_depth;
        const int8_t *w = weights;
        int32_t c = 0;
        for (int32_t g = 0; g < groups; g++, c += 4) {
            int32_t acc0 = bias[c];
            int32_t acc1 = bias[c + 1];
            int32_t acc2 = bias[c + 2];
            int32_t acc3 = bias[c + 3];
            const int8_t *x = x_row;
            /* Two chunks per iteration (pointer compares, no counter). The weights are 8-byte
             * aligned throughout when the array is and the depth is even (every group then
             * spans a multiple of 8 bytes): LDRD then loads two words at once. */
            const int8_t *x_pairs_end = x_row + (chunks & ~(int32_t)1) * 4;
            if (aligned) {
                while (x != x_pairs_end) {
                    FC_DSP_CHUNK4(0, fc_load2_aligned)
                    FC_DSP_CHUNK4(1, fc_load2_aligned)
                    x += 8;
                    w += 32;
                }
            } else {
                while (x != x_pairs_end) {
                    FC_DSP_CHUNK4(0, fc_load2)
                    FC_DSP_CHUNK4(1, fc_load2)
                    x += 8;
                    w += 32;
                }
            }
            if (chunks & 1) {
                FC_DSP_CHUNK4(0, fc_load2)
                x += 4;
                w += 16;
            }
            for (int32_t t = 0; t < tail; t++) {
                const int32_t xt = x[t];
                acc0 += w[t] * xt;
                acc1 += w[tail + t] * xt;
                acc2 += w[2 * tail + t] * xt;
                acc3 += w[3 * tail + t] * xt;
            }
            w += 4 * tail;
            y[c] = mb_fc_requantize(params, c, acc0);
            y[c + 1] = mb_fc_requantize(params, c + 1, acc1);
            y[c + 2] = mb_fc_requantize(params, c + 2, acc2);
            y[c + 3] = mb_fc_requantize(params, c + 3, acc3);
        }
        for (; c < out_depth; c++) {
            int32_t acc = bias[c];
            const int8_t *x = x_row;
            for (int32_t k = 0; k < chunks; k++, x += 4, w += 4) {
                const uint32_t xv = fc_load32(x);
                const uint32_t wv = fc_load32(w);
                acc = __smlad(fc_even(wv), fc_even(xv), acc);
                acc = __smlad(fc_odd(wv), fc_odd(xv), acc);
            }
            for (int32_t t = 0; t < tail; t++) {
                acc += w[t] * x[t];
            }
            w += tail;
            y[c] = mb_fc_requantize(params, c, acc);
        }
    }
}

/* dsp_wide: the dsp layout widened to int16 at compile time, each whole chunk's four weights stored
 * w0 w2 w1 w3 (arrange_dsp_wide in microbuild/compiler/ops/fully_connected.py), so a row's chunk is
 * the two words SMLAD pairs with the input's (x0, x2) and (x1, x3) directly: no SXTB16 on the
 * weights, 15 instructions per 16 MACs instead of 21, for twice the weights' flash. The tail and
 * the rows left over keep the dsp order of their values, as int16. */
/* Two words of int16 weights at p + offset values. In the groups' chunks always 8-byte aligned:
 * the array is (MB_WEIGHTS_ATTR, 16), and every chunk, group and tail spans a multiple of 8
 * bytes (4 rows x 2 bytes per value). One LDRD then (GCC splits a 64-bit memcpy into two LDR
 * when only the halves are used, so it is spelled out). */
#if defined(__thumb2__)
#define FC_WIDE_LDRD(p, offset, a, b)                                                             \
    __asm__("ldrd %0, %1, [%2, %3]" : "=r"(a), "=r"(b) : "r"(p), "I"(2 * (offset)))
#else
#define FC_WIDE_LDRD(p, offset, a, b) fc_wide_load2((p) + (offset), &(a), &(b))
#endif

/* Any alignment (the rows left over when the depth is not a multiple of 4). */
static inline void fc_wide_load2(const int16_t *p, uint32_t *a, uint32_t *b)
{
    memcpy(a, p, 4);
    memcpy(b, p + 2, 4);
}

#define FC_DSP_WIDE_CHUNK4(k)                                                                        \
    {                                                                                             \
        const uint32_t xv = fc_load32(x + 4 * (k));                                               \
        const int32_t xe = fc_even(xv);                                                           \
        const int32_t xo = fc_odd(xv);                                                            \
        uint32_t a, b;                                                                            \
        FC_WIDE_LDRD(w, 16 * (k), a, b);                                                          \
        acc0 = __smlad((int32_t)a, xe, acc0);                                                     \
        acc0 = __smlad((int32_t)b, xo, acc0);                                                     \
        FC_WIDE_LDRD(w, 16 * (k) + 4, a, b);                                                      \
        acc1 = __smlad((int32_t)a, xe, acc1);                                                     \
        acc1 = __smlad((int32_t)b, xo, acc1);                                                     \
        FC_WIDE_LDRD(w, 16 * (k) + 8, a, b);                                                      \
        acc2 = __smlad((int32_t)a, xe, acc2);                                                     \
        acc2 = __smlad((int32_t)b, xo, acc2);                                                     \
        FC_WIDE_LDRD(w, 16 * (k) + 12, a, b);                                                     \
        acc3 = __smlad((int32_t)a, xe, acc3);                                                     \
        acc3 = __smlad((int32_t)b, xo, acc3);                                                     \
    }

void mb_fully_connected_s8_dsp_wide(const mb_fully_connected_s8_params *params,
                                 const int8_t *input, const int8_t *weights_bytes,
                                 const int32_t *bias, int8_t *output, void *scratch)
{
    const int16_t *weights = (const int16_t *)(const void *)weights_bytes;
    const int32_t depth = params->input_depth;
    const int32_t out_depth = params->output_depth;
    const int32_t groups = out_depth / 4;
    const int32_t chunks = depth / 4;
    const int32_t tail = depth - chunks * 4;
    (void)scratch;
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x_row = input + b * depth;
        int8_t *y = output + b * out_depth;
        const int16_t *w = weights;
        int32_t c = 0;
        for (int32_t g = 0; g < groups; g++, c += 4) {
            int32_t acc0 = bias[c];
            int32_t acc1 = bias[c + 1];
            int32_t acc2 = bias[c + 2];
            int32_t acc3 = bias[c + 3];
            const int8_t *x = x_row;
            const int8_t *x_pairs_end = x_row + (chunks & ~(int32_t)1) * 4;
            while (x != x_pairs_end) {
                FC_DSP_WIDE_CHUNK4(0)
                FC_DSP_WIDE_CHUNK4(1)
                x += 8;
                w += 32;
            }
            if (chunks & 1) {
                FC_DSP_WIDE_CHUNK4(0)
                x += 4;
                w += 16;
            }
            for (int32_t t = 0; t < tail; t++) {
                const int32_t xt = x[t];
                acc0 += w[t] * xt;
                acc1 += w[tail + t] * xt;
                acc2 += w[2 * tail + t] * xt;
                acc3 += w[3 * tail + t] * xt;
            }
            w += 4 * tail;
            y[c] = mb_fc_requantize(params, c, acc0);
            y[c + 1] = mb_fc_requantize(params, c + 1, acc1);
            y[c + 2] = mb_fc_requantize(params, c + 2, acc2);
            y[c + 3] = mb_fc_requantize(params, c + 3, acc3);
        }
        for (; c < out_depth; c++) {
            int32_t acc = bias[c];
            const int8_t *x = x_row;
            for (int32_t k = 0; k < chunks; k++, x += 4, w += 4) {
                const uint32_t xv = fc_load32(x);
                uint32_t a, bw;
                fc_wide_load2(w, &a, &bw);
                acc = __smlad((int32_t)a, fc_even(xv), acc);
                acc = __smlad((int32_t)bw, fc_odd(xv), acc);
            }
            for (int32_t t = 0; t < tail; t++) {
                acc += w[t] * x[t];
            }
            w += tail;
            y[c] = mb_fc_requantize(params, c, acc);
        }
    }
}

#else
typedef int mb_fully_connected_dsp_unused;
#endif
