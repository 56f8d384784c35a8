/* CONV_2D with 16-bit activations (16x8), Arm DSP variant "dsp_s16" (Cortex-M4/M7/M33/M55).
 *
 * The input is int16 already, so the window's taps pair up for SMLAD as they are loaded, and the
 * filter is widened to int16 at compile time (conv2d.py, _arrange_s16_dsp): the int8 kernel
 * dsp16's inner loop (mb_conv2d_dsp16_block in conv2d_dsp.c: blocks of 2 pixels x 2 channels,
 * 10 instructions per 16 multiply-accumulates) runs on it unchanged. Filter layout: channels
 * padded with a zero row to an even count, rows padded with zero taps to kp (a multiple of 4),
 * each channel pair stored group by group (4 taps of the first channel, the same 4 of the
 * second), taps in their natural order (the column's words are (x0, x1) and (x2, x3)).
 *
 * Each pixel's window is gathered into a linear int16 column (taps in the padding are 0, the
 * int16 zero point, so they add nothing as the reference's skipping does), then the 2 pixels'
 * columns are interleaved group by group as the block reads them; a depth that is a multiple of
 * 4 is gathered straight into the interleaved column.
 *
 * TFLM sums in int64. SMLAD sums in int32, which is exact for at most 511 taps (each product is
 * at most 2^15 * 2^7 = 2^22 in magnitude): the block runs on chunks of at most CHUNK_GROUPS
 * groups (508 taps) and the chunks' int32 sums are added in int64, so every sum is the
 * reference's exact int64 sum and the requantized outputs are the same bytes.
 *
 * Scratch (conv2d.py, _scratch_s16_dsp): the interleaved columns (2 * kp int16), the two
 * linear columns (2 * kp int16), then 16 bytes of requantization constants per channel. */
#if defined(__ARM_FEATURE_DSP)

#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/conv2d_s16_parts.h"
#include "microbuild/kernels/conv_s16_requant.h"
#include "microbuild/quant.h"

#define CHUNK_GROUPS 127 /* 508 taps: 508 * 2^22 < 2^31 */

/* conv2d_dsp.c's inner loop (the dsp16 variant's): groups >= 1 groups of 4 taps of a block of 2
 * pixels x 2 channels into acc = {p0 c0, p1 c0, p0 c1, p1 c1}. */
void mb_conv2d_dsp16_block(const int32_t *x, const int32_t *filter, int32_t groups,
                           int32_t *acc);

/* n groups of 4 int16 from src into every fourth word pair of d (one pixel's half of the
 * interleaved column), or zeros for src NULL. */
static inline void s16_groups(int32_t *d, const int16_t *src, int32_t n)
{
    if (src == NULL) {
        for (; n > 0; n--, d += 4) {
            d[0] = 0;
            d[1] = 0;
        }
        return;
    }
    for (; n > 0; n--, d += 4, src += 4) {
        d[0] = s16_load32(src);
        d[1] = s16_load32(src + 2);
    }
}

/* s16_window for a depth that is a multiple of 4: straight into pixel q's words of the
 * interleaved column (d = cols + 2 * q). */
static void s16_window4(const mb_conv2d_s8_params *p, const int16_t *in, int32_t oy, int32_t ox,
                        int32_t *d)
{
    const int32_t depth = p->input_c;
    const int32_t per_pixel = depth / 4;
    const int32_t y0 = oy * p->stride_h - p->pad_top;
    const int32_t x0 = ox * p->stride_w - p->pad_left;
    const int32_t x_last = x0 + (p->filter_w - 1) * p->dilation_w;
    const int32_t row_groups = p->filter_w * per_pixel;
    const int inside = p->dilation_w == 1 && x0 >= 0 && x_last < p->input_w;
    for (int32_t ky = 0; ky < p->filter_h; ky++) {
        const int32_t y = y0 + ky * p->dilation_h;
        if (y < 0 || y >= p->input_h) {
            s16_groups(d, NULL, row_groups);
        } else if (inside) {
            s16_groups(d, in + (y * p->input_w + x0) * depth, row_groups);
        } else {
            for (int32_t kx = 0; kx < p->filter_w; kx++) {
                const int32_t x = x0 + kx * p->dilation_w;
                s16_groups(d + 4 * kx * per_pixel,
                           x < 0 || x >= p->input_w ? NULL : in + (y * p->input_w + x) * depth,
                           per_pixel);
            }
        }
        d += 4 * row_groups;
    }
}

void mb_conv2d_s16_dsp(const mb_conv2d_s8_params *p, const int16_t *input, const int8_t *filter,
                       const int64_t *bias, const int32_t *multipliers, const int32_t *shifts,
                       int16_t *output, void *scratch)
{
    const int32_t k = p->filter_h * p->filter_w * p->input_c;
    const int32_t kp = (k + 3) & ~(int32_t)3;
    const int32_t groups = kp / 4;
    const int32_t oc = p->output_c;
    const int32_t pixels = p->output_h * p->output_w;
    const int32_t total = p->batches * pixels;
    const int32_t image = p->input_h * p->input_w * p->input_c;
    const int32_t lo = p->activation_min, hi = p->activation_max;
    int32_t *cols = (int32_t *)scratch;
    int16_t *lin0 = (int16_t *)scratch + 2 * kp;
    int16_t *lin1 = lin0 + kp;
    mb_s16_channel *table = (mb_s16_channel *)(void *)(lin1 + kp);
    mb_s16_channels(bias, multipliers, shifts, oc, table);
    const int32_t *f16 = (const int32_t *)(const void *)filter;
    const int direct = (p->input_c & 3) == 0; /* then k == kp */
    s16_zero(lin0 + k, kp - k); /* the padding taps, beyond every window */
    s16_zero(lin1 + k, kp - k);
    for (int32_t n = 0; n < total; n += 2) {
        const int32_t two = total - n > 1;
        const int32_t m1 = two ? n + 1 : n;
        const int16_t *im0 = input + (n / pixels) * image, *im1 = input + (m1 / pixels) * image;
        const int32_t oy0 = (n % pixels) / p->output_w, ox0 = n % p->output_w;
        const int32_t oy1 = (m1 % pixels) / p->output_w, ox1 = m1 % p->output_w;
        if (direct) {
            s16_window4(p, im0, oy0, ox0, cols);
            s16_window4(p, im1, oy1, ox1, cols + 2);
        } else {
            s16_window(p, im0, oy0, ox0, lin0);
            s16_window(p, im1, oy1, ox1, lin1);
            for (int32_t g = 0; g < groups; g++) {
                cols[4 * g] = s16_load32(lin0 + 4 * g);
                cols[4 * g + 1] = s16_load32(lin0 + 4 * g + 2);
                cols[4 * g + 2] = s16_load32(lin1 + 4 * g);
                cols[4 * g + 3] = s16_load32(lin1 + 4 * g + 2);
            }
        }
        int16_t *out0 = output + n * oc;
        int16_t *out1 = two ? out0 + oc : out0; /* a missing pixel: the same values again */
        const int32_t *f = f16;
        if (groups <= CHUNK_GROUPS) {
            for (int32_t c = 0; c < oc; c += 2) {
                int32_t a[4];
                mb_conv2d_dsp16_block(cols, f, groups, a);
                f += 4 * groups;
                out1[c] = mb_s16_finish32(a[1], &table[c], lo, hi);
                out0[c] = mb_s16_finish32(a[0], &table[c], lo, hi);
                if (c + 1 < oc) {
                    out1[c + 1] = mb_s16_finish32(a[3], &table[c + 1], lo, hi);
                    out0[c + 1] = mb_s16_finish32(a[2], &table[c + 1], lo, hi);
                }
            }
            continue;
        }
        for (int32_t c = 0; c < oc; c += 2) {
            int64_t a[4] = {0, 0, 0, 0};
            for (int32_t g = 0; g < groups; g += CHUNK_GROUPS) {
                const int32_t len = groups - g < CHUNK_GROUPS ? groups - g : CHUNK_GROUPS;
                int32_t part[4];
                mb_conv2d_dsp16_block(cols + 4 * g, f + 4 * g, len, part);
                for (int32_t i = 0; i < 4; i++) {
                    a[i] += part[i];
                }
            }
            f += 4 * groups;
            out1[c] = mb_s16_finish64(a[1], &table[c], lo, hi);
            out0[c] = mb_s16_finish64(a[0], &table[c], lo, hi);
            if (c + 1 < oc) {
                out1[c + 1] = mb_s16_finish64(a[3], &table[c + 1], lo, hi);
                out0[c + 1] = mb_s16_finish64(a[2], &table[c + 1], lo, hi);
            }
        }
    }
}

#else
typedef int mb_conv2d_s16_dsp_unused;
#endif
