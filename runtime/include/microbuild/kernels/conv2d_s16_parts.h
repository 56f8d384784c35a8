/* What the 16x8 CONV_2D variants (conv2d_s16_dsp.c, conv2d_s16_mve.c) share beside their
 * requantization (conv_s16_requant.h): a pixel's window as a linear int16 column. Static
 * functions: each including kernel gets its own copy and the compiler inlines them as it sees
 * fit. */
#ifndef MICROBUILD_KERNELS_CONV2D_S16_PARTS_H
#define MICROBUILD_KERNELS_CONV2D_S16_PARTS_H

#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/copy_bytes.h"

static inline int32_t s16_load32(const int16_t *p)
{
    int32_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

/* n int16 from src to dst, and n zeros: on Helium copy_bytes.h's vector loops, elsewhere words
 * while two or more are left (copy_bytes.h's word-then-byte copy measured 10% slower on the
 * M4's 3-deep windows). */
static inline void s16_copy(int16_t *dst, const int16_t *src, int32_t n)
{
#if defined(__ARM_FEATURE_MVE)
    mb_copy_bytes_forward(dst, src, 2 * n);
#else
    for (; n >= 2; n -= 2) {
        const int32_t v = s16_load32(src);
        memcpy(dst, &v, 4);
        src += 2;
        dst += 2;
    }
    if (n) {
        *dst = *src;
    }
#endif
}

static inline void s16_zero(int16_t *dst, int32_t n)
{
#if defined(__ARM_FEATURE_MVE)
    static const uint8_t zeros[4] = {0, 0, 0, 0};
    mb_fill_bytes(dst, 2 * n, zeros);
#else
    for (int32_t i = 0; i < n; i++) {
        dst[i] = 0;
    }
#endif
}

/* The window of output pixel (oy, ox) of image `in` as a linear column of k taps. */
static __attribute__((unused)) void s16_window(const mb_conv2d_s8_params *p,
                                               const int16_t *in, int32_t oy, int32_t ox,
                                               int16_t *col)
{
    const int32_t depth = p->input_c;
    const int32_t y0 = oy * p->stride_h - p->pad_top;
    const int32_t x0 = ox * p->stride_w - p->pad_left;
    const int32_t row_taps = p->filter_w * depth;
    const int32_t x_last = x0 + (p->filter_w - 1) * p->dilation_w;
    for (int32_t ky = 0; ky < p->filter_h; ky++) {
        const int32_t y = y0 + ky * p->dilation_h;
        if (y < 0 || y >= p->input_h) {
            s16_zero(col, row_taps);
        } else if (p->dilation_w == 1 && x0 >= 0 && x_last < p->input_w) {
            s16_copy(col, in + (y * p->input_w + x0) * depth, row_taps);
        } else {
            for (int32_t kx = 0; kx < p->filter_w; kx++) {
                const int32_t x = x0 + kx * p->dilation_w;
                if (x < 0 || x >= p->input_w) {
                    s16_zero(col + kx * depth, depth);
                } else {
                    s16_copy(col + kx * depth, in + (y * p->input_w + x) * depth, depth);
                }
            }
        }
        col += row_taps;
    }
}

#endif
