/* What the TRANSPOSE_CONV int8 variants (transpose_conv_fast.c, _dsp.c, _mve.c) share: TFLM's
 * scatter, one output row at a time. Input pixel (iy, ix) reaches output pixel
 * (iy * stride_h - pad_top + ky, ix * stride_w - pad_left + kx) through tap (ky, kx). For each
 * output row the kernels sum, in an int32 row of output_w * output_c accumulators started at the
 * bias, the contributions of the filter rows that reach it: each input pixel of the matching
 * input row adds its dot product with the taps (kx, channel) that land inside the row, which
 * are consecutive both in the accumulators and in the pre-arranged weights (one flat loop).
 * Then the row is requantized. The int32 sums are exact in any order (the compiler refuses
 * filters whose sums could leave int32), so the results are TFLM's bit for bit.
 *
 * Weights are pre-arranged at compile time as int16 [filter_h][filter_w][output_c][depth2]
 * (depth2: input_c rounded up to even, the extra weight 0), and each batch's input is widened
 * once into int16 pixels of depth2 values with the input offset added (the extra value 0).
 * Scratch: the accumulator row (output_w * output_c int32), then the widened image. */
#ifndef MICROBUILD_KERNELS_TRANSPOSE_CONV_SCATTER_H
#define MICROBUILD_KERNELS_TRANSPOSE_CONV_SCATTER_H

#include <stdint.h>

#include "microbuild/kernels/transpose_conv.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

static inline int32_t mb_tconv_depth2(const mb_transpose_conv_params *p)
{
    return (p->input_c + 1) & ~(int32_t)1;
}

/* One batch's input, widened to int16 with the offset added, depth padded to depth2. */
static inline void mb_tconv_widen(const mb_transpose_conv_params *p, const int8_t *input,
                                  int16_t *wide)
{
    const int32_t pixels = p->input_h * p->input_w;
    const int32_t ic = p->input_c;
    const int32_t offset = p->input_offset;
    for (int32_t i = 0; i < pixels; i++, input += ic) {
        for (int32_t c = 0; c < ic; c++) {
            *wide++ = (int16_t)(input[c] + offset);
        }
        if (ic & 1) {
            *wide++ = 0;
        }
    }
}

/* Input pixel x through `columns` consecutive filter taps of one row into the accumulators of
 * `columns` consecutive output pixels (oc each), w the first tap's weights (oc * depth2): the
 * variant's inner loop. */
typedef void (*mb_tconv_taps_fn)(int32_t *acc, const int16_t *x, const int16_t *w,
                                 int32_t columns, int32_t oc, int32_t depth2);

/* The accumulator row (output_w * output_c) requantized into output row `out`. */
typedef void (*mb_tconv_row_fn)(const mb_transpose_conv_params *p, const int32_t *acc,
                                const int32_t *multipliers, const int32_t *shifts, int8_t *out);

/* One channel of the accumulator row (every stride-th value) requantized into out: a function
 * of its own so its loop gets the registers (the byte stores would otherwise alias the params
 * and force reloads). */
static __attribute__((noinline)) void mb_tconv_requantize_channel(
    const int32_t *acc, int8_t *out, int32_t count, int32_t stride, int32_t multiplier,
    int32_t shift, int32_t out_offset, int32_t lo, int32_t hi)
{
    /* mb_requantize_fast32 (quant_fast.h) with the shift's parts hoisted out of the loop */
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int32_t mask = (int32_t)(((uint32_t)1 << right) - 1u);
    const int32_t half = mask >> 1;
    for (; count > 0; count--, acc += stride, out += stride) {
        const int64_t product = (int64_t)(int32_t)((uint32_t)*acc << left) * multiplier;
        const int32_t high = (int32_t)((product + ((int64_t)1 << 30)) >> 31);
        const int32_t v = (high >> right) + ((high & mask) > half - (high >> 31) ? 1 : 0) +
                          out_offset;
        *out = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
    }
}

static inline void mb_tconv_requantize_row(const mb_transpose_conv_params *p, const int32_t *acc,
                                           const int32_t *multipliers, const int32_t *shifts,
                                           int8_t *out)
{
    const int32_t oc = p->output_c;
    for (int32_t o = 0; o < oc; o++) {
        mb_tconv_requantize_channel(acc + o, out + o, p->output_w, oc, multipliers[o], shifts[o],
                                    p->output_offset, p->activation_min, p->activation_max);
    }
}

#if defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>

#include "microbuild/dsp_words.h"

/* The taps with SMLAD on int16 pairs (the dsp variant's, and the mve variant's when the output
 * channels do not fill its vectors). */
/* WORDS words of input pairs in registers, then for every tap WORDS SMLAD. */
#define TCONV_DSP_TAPS(WORDS)                                                                  \
    do {                                                                                       \
        int32_t xs[WORDS];                                                                     \
        for (int32_t k = 0; k < (WORDS); k++) {                                                \
            xs[k] = (int32_t)mb_load32(x + 2 * k);                                             \
        }                                                                                      \
        for (int32_t j = 0; j < count; j++, w += 2 * (WORDS)) {                                \
            int32_t s = acc[j];                                                                \
            for (int32_t k = 0; k < (WORDS); k++) {                                            \
                s = __smlad(xs[k], (int32_t)mb_load32(w + 2 * k), s);                          \
            }                                                                                  \
            acc[j] = s;                                                                        \
        }                                                                                      \
    } while (0)

static inline void mb_tconv_taps_dsp(int32_t *acc, const int16_t *x, const int16_t *w,
                                     int32_t columns, int32_t oc, int32_t depth2)
{
    const int32_t count = columns * oc;
    switch (depth2) {
    case 2: TCONV_DSP_TAPS(1); return;
    case 4: TCONV_DSP_TAPS(2); return;
    case 6: TCONV_DSP_TAPS(3); return;
    case 8: TCONV_DSP_TAPS(4); return;
    default: break;
    }
    for (int32_t j = 0; j < count; j++, w += depth2) {
        int32_t s = acc[j];
        for (int32_t c = 0; c < depth2; c += 2) {
            s = __smlad((int32_t)mb_load32(x + c), (int32_t)mb_load32(w + c), s);
        }
        acc[j] = s;
    }
}

#endif

/* The walk every variant shares. pad_top and pad_left are >= 0 (the lowering checks). */
static inline void mb_tconv_scatter(const mb_transpose_conv_params *p, const int8_t *input,
                                    const int16_t *weights, const int32_t *bias,
                                    const int32_t *multipliers, const int32_t *shifts,
                                    int8_t *output, void *scratch, mb_tconv_taps_fn taps,
                                    mb_tconv_row_fn requantize_row)
{
    const int32_t depth2 = mb_tconv_depth2(p);
    const int32_t oc = p->output_c;
    const int32_t out_w = p->output_w;
    const int32_t row_len = out_w * oc;
    const int32_t tap_len = oc * depth2;
    const int32_t in_h = p->input_h;
    const int32_t in_w = p->input_w;
    const int32_t filter_h = p->filter_h;
    const int32_t filter_w = p->filter_w;
    const int32_t stride_h = p->stride_h;
    const int32_t stride_w = p->stride_w;
    const int32_t pad_left = p->pad_left;
    int32_t *acc = (int32_t *)scratch;
    int16_t *wide = (int16_t *)(void *)(acc + row_len);
    const int32_t in_image = in_h * in_w * p->input_c;
    for (int32_t b = 0; b < p->batches; b++) {
        mb_tconv_widen(p, input + b * in_image, wide);
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            for (int32_t o = 0; o < oc; o++) {
                const int32_t start = bias != 0 ? bias[o] : 0;
                for (int32_t i = o; i < row_len; i += oc) {
                    acc[i] = start;
                }
            }
            /* filter rows ky = t % stride, + stride, ... meet input rows t / stride, - 1, ... */
            const int32_t t = oy + p->pad_top;
            for (int32_t ky = t % stride_h, iy = t / stride_h; ky < filter_h && iy >= 0;
                 ky += stride_h, iy--) {
                if (iy >= in_h) {
                    continue;
                }
                const int16_t *x = wide + iy * in_w * depth2;
                const int16_t *w_row = weights + ky * filter_w * tap_len;
                for (int32_t ix = 0, x0 = -pad_left; ix < in_w;
                     ix++, x0 += stride_w, x += depth2) {
                    const int32_t kx0 = x0 < 0 ? -x0 : 0;
                    const int32_t kx1 = out_w - x0 < filter_w ? out_w - x0 : filter_w;
                    if (kx1 > kx0) {
                        taps(acc + (x0 + kx0) * oc, x, w_row + kx0 * tap_len, kx1 - kx0, oc,
                             depth2);
                    }
                }
            }
            requantize_row(p, acc, multipliers, shifts, output);
            output += row_len;
        }
    }
}

#endif
