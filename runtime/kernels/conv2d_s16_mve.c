/* CONV_2D with 16-bit activations (16x8), Helium variant "mve_s16" (Cortex-M55/M85).
 *
 * TFLM sums 16x8 products in int64; VMLALDAVA.S16 does exactly that: 8 int16 x int16 products
 * added into a 64-bit accumulator (a pair of core registers) by one instruction, so the sums are
 * the reference's int64 sums however many taps a window has (dsp_s16 needs int32 chunks).
 *
 * Each output pixel's window is gathered into a linear int16 column (conv2d_s16_parts.h; taps
 * in the padding are 0, the int16 zero point, so they add nothing as the reference's skipping
 * does), padded with zeros to kp taps, a multiple of 8. The filter stays int8, arranged at
 * compile time as one row of kp taps per output channel (zeros after the k real ones; conv2d.py,
 * _arrange_s16_mve), and VLDRB.S16 widens 8 of them per load. Blocks of 2 pixels x 2 channels:
 * per 8 taps 2 column loads, 2 filter loads and 4 VMLALDAVA (32 multiply-accumulates in 8
 * instructions). An odd last pixel or channel runs its block with the previous one repeated and
 * is stored once.
 *
 * Scratch (conv2d.py, _scratch_s16_mve): the 2 pixels' columns (2 * kp int16), then 16 bytes of
 * requantization constants per channel. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <stdint.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/conv2d_s16_parts.h"
#include "microbuild/kernels/conv_s16_requant.h"

/* mb_s16_finish32 with v8.1-M's 64-bit scalar shift: SMLAL onto the channel's constant, one
 * ASRL by the right shift (1..63; mb_s16_shift's two-word form took a branch and 4 instructions
 * more), then the activation range. */
static inline __attribute__((always_inline)) int16_t finish(int32_t acc,
                                                            const mb_s16_channel *t, int32_t lo,
                                                            int32_t hi)
{
    const int32_t v = (int32_t)asrl((int64_t)acc * t->reduced + t->c, t->shift_r);
    return (int16_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* A sum's output: finish() when every sum of the call fits int32 (NARROW: one SMLAL onto the
 * channel's constant), else the int64 form. */
static inline __attribute__((always_inline)) int16_t result(int64_t acc, const mb_s16_channel *t,
                                                            int32_t lo, int32_t hi, int narrow)
{
    return narrow ? finish((int32_t)acc, t, lo, hi) : mb_s16_finish64(acc, t, lo, hi);
}

void mb_conv2d_s16_mve(const mb_conv2d_s8_params *p, const int16_t *input, const int8_t *filter,
                       const int64_t *bias, const int32_t *multipliers, const int32_t *shifts,
                       int16_t *output, void *scratch)
{
    const int32_t k = p->filter_h * p->filter_w * p->input_c;
    const int32_t kp = (k + 7) & ~(int32_t)7;
    const int32_t chunks = kp / 8;
    const int32_t oc = p->output_c;
    const int32_t pixels = p->output_h * p->output_w;
    const int32_t total = p->batches * pixels;
    const int32_t image = p->input_h * p->input_w * p->input_c;
    const int32_t lo = p->activation_min, hi = p->activation_max;
    /* each product is at most 2^15 * 2^7 in magnitude: up to 511 taps the sum fits int32 */
    const int narrow = k <= 511;
    int16_t *col0 = (int16_t *)scratch;
    int16_t *col1 = col0 + kp;
    mb_s16_channel *table = (mb_s16_channel *)(void *)(col1 + kp);
    mb_s16_channels(bias, multipliers, shifts, oc, table);
    s16_zero(col0 + k, kp - k); /* the padding taps, beyond every window */
    s16_zero(col1 + k, kp - k);
    for (int32_t n = 0; n < total; n += 2) {
        const int two = total - n > 1;
        s16_window(p, input + (n / pixels) * image, (n % pixels) / p->output_w,
                   n % p->output_w, col0);
        const int16_t *x1 = col0; /* a missing second pixel: the first again, not stored */
        if (two) {
            const int32_t m = n + 1;
            s16_window(p, input + (m / pixels) * image, (m % pixels) / p->output_w,
                       m % p->output_w, col1);
            x1 = col1;
        }
        int16_t *out0 = output + n * oc;
        int16_t *out1 = out0 + oc;
        for (int32_t c = 0; c < oc; c += 2) {
            const int8_t *f0 = filter + c * kp;
            const int8_t *f1 = c + 1 < oc ? f0 + kp : f0;
            const int16_t *x0 = col0, *y1 = x1;
            int64_t a00 = 0, a10 = 0, a01 = 0, a11 = 0; /* pixel, channel */
            for (int32_t j = 0; j < chunks; j++, x0 += 8, y1 += 8, f0 += 8, f1 += 8) {
                const int16x8_t p0 = vldrhq_s16(x0), p1 = vldrhq_s16(y1);
                const int16x8_t w0 = vldrbq_s16(f0), w1 = vldrbq_s16(f1);
                a00 = vmlaldavaq_s16(a00, p0, w0);
                a10 = vmlaldavaq_s16(a10, p1, w0);
                a01 = vmlaldavaq_s16(a01, p0, w1);
                a11 = vmlaldavaq_s16(a11, p1, w1);
            }
            out0[c] = result(a00, &table[c], lo, hi, narrow);
            if (two) {
                out1[c] = result(a10, &table[c], lo, hi, narrow);
            }
            if (c + 1 < oc) {
                out0[c + 1] = result(a01, &table[c + 1], lo, hi, narrow);
                if (two) {
                    out1[c + 1] = result(a11, &table[c + 1], lo, hi, narrow);
                }
            }
        }
    }
}

#else
typedef int mb_conv2d_s16_mve_unused;
#endif
