/* FULLY_CONNECTED with 16-bit activations (16x8), Arm DSP variant "dsp_s16" (Cortex-M4/M7/M33/
 * M55): SMLALD adds two int16 x int16 products to a 64-bit accumulator, so an int16 input pair is
 * used as it is loaded, four output rows per pass over the input.
 *
 * Weights are pre-arranged at compile time (arrange_rows_s16 in fully_connected.py): the layout
 * of arrange_rows(4, 4) (per group of four rows: whole 4-byte chunks chunk by chunk, each holding
 * the four rows' chunks one after the other; then the group's last depth % 4 bytes row after row;
 * rows left over follow as stored), with the bytes of every whole chunk stored w0 w2 w1 w3. SXTB16
 * then sign-extends bytes 0 and 2 into the pair (w0, w1), and SXTB16 ROR #8 bytes 1 and 3 into
 * (w2, w3): the same pairs as the input words (x0, x1) and (x2, x3). Same size as the original.
 *
 * The sums are exact int64 sums of the same products as the reference (in another order), so the
 * requantized outputs are the same bytes. */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/quant.h"

static inline int16x2_t fcs16_pair(const int16_t *p)
{
    int16x2_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

static inline uint32_t fcs16_word(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline int16x2_t fcs16_low(uint32_t w)
{
    return __sxtb16((int32_t)w);
}

/* Bytes 1 and 3: SXTB16 with its own ROR #8 (GCC 12 would not fold a separate rotate). */
static inline int16x2_t fcs16_high(uint32_t w)
{
    int16x2_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(w));
    return r;
}

static inline int16_t fcs16_finish(const mb_fully_connected_s16_params *p, int64_t acc,
                                   const int64_t *bias, int32_t o)
{
    if (bias != NULL) {
        acc += bias[o];
    }
    const int32_t m = p->output_multipliers ? p->output_multipliers[o] : p->output_multiplier;
    const int32_t s = p->output_shifts ? p->output_shifts[o] : p->output_shift;
    const int32_t y = mb_mul_by_quantized_multiplier_s64(acc, m, (int)s);
    return (int16_t)mb_clamp_i32(y, p->activation_min, p->activation_max);
}

void mb_fully_connected_s16_dsp(const mb_fully_connected_s16_params *p, const int16_t *input,
                                const int8_t *weights, const int64_t *bias, int16_t *output,
                                void *scratch)
{
    (void)scratch;
    const int32_t depth = p->input_depth;
    const int32_t full = depth & ~(int32_t)3;
    const int32_t rest = depth - full;
    const int32_t grouped = p->output_depth & ~(int32_t)3;
    for (int32_t b = 0; b < p->batches; b++) {
        const int16_t *x = input + b * depth;
        int16_t *y = output + b * p->output_depth;
        const int8_t *w = weights;
        for (int32_t o = 0; o < grouped; o += 4) {
            int64_t acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
            for (int32_t k = 0; k < full; k += 4) {
                const int16x2_t x01 = fcs16_pair(x + k);
                const int16x2_t x23 = fcs16_pair(x + k + 2);
                const uint32_t w0 = fcs16_word(w), w1 = fcs16_word(w + 4);
                const uint32_t w2 = fcs16_word(w + 8), w3 = fcs16_word(w + 12);
                acc0 = __smlald(x01, fcs16_low(w0), acc0);
                acc0 = __smlald(x23, fcs16_high(w0), acc0);
                acc1 = __smlald(x01, fcs16_low(w1), acc1);
                acc1 = __smlald(x23, fcs16_high(w1), acc1);
                acc2 = __smlald(x01, fcs16_low(w2), acc2);
                acc2 = __smlald(x23, fcs16_high(w2), acc2);
                acc3 = __smlald(x01, fcs16_low(w3), acc3);
                acc3 = __smlald(x23, fcs16_high(w3), acc3);
                w += 16;
            }
            /* The group's last depth % 4 bytes, row after row. */
            for (int32_t d = 0; d < rest; d++) {
                const int32_t xv = x[full + d];
                acc0 += (int32_t)w[d] * xv;
                acc1 += (int32_t)w[rest + d] * xv;
                acc2 += (int32_t)w[2 * rest + d] * xv;
                acc3 += (int32_t)w[3 * rest + d] * xv;
            }
            w += 4 * rest;
            y[o] = fcs16_finish(p, acc0, bias, o);
            y[o + 1] = fcs16_finish(p, acc1, bias, o + 1);
            y[o + 2] = fcs16_finish(p, acc2, bias, o + 2);
            y[o + 3] = fcs16_finish(p, acc3, bias, o + 3);
        }
        /* Rows left over, as the model stores them. */
        for (int32_t o = grouped; o < p->output_depth; o++) {
            int64_t acc = 0;
            for (int32_t d = 0; d < depth; d++) {
                acc += (int32_t)w[d] * (int32_t)x[d];
            }
            w += depth;
            y[o] = fcs16_finish(p, acc, bias, o);
        }
    }
}

#else
typedef int mb_fully_connected_s16_dsp_unused;
#endif
