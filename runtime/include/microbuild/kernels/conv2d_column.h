/* The im2col step shared by the CONV_2D kernel variants that work on int8 columns
 * (conv2d_gemm.c, conv2d_mve.c, and conv2d_dsp.c for depths that are not a multiple of 4): one
 * output pixel's window as a column of kp int8 taps, the taps in the padding holding the input
 * zero point (so they add filter * (zero_point + input_offset) = 0, as the reference's skipping
 * does) and zeros after the window up to kp. */
#ifndef MICROBUILD_KERNELS_CONV2D_COLUMN_H
#define MICROBUILD_KERNELS_CONV2D_COLUMN_H

#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/copy_bytes.h"

/* n taps of c bytes, `step` input bytes apart, into consecutive taps at dst: a tap of 1-4 bytes
 * is one or two plain loads and stores (unaligned word / halfword accesses where the core has
 * them: memcpy of a constant size), the switch outside the loop. */
static inline void mb_conv2d_copy_taps(int8_t *dst, const int8_t *src, int32_t n, int32_t c,
                                       int32_t step)
{
    switch (c) {
    case 1:
        for (int32_t i = 0; i < n; i++, src += step) {
            dst[i] = src[0];
        }
        break;
    case 2:
        for (int32_t i = 0; i < n; i++, src += step, dst += 2) {
            uint16_t h;
            memcpy(&h, src, 2);
            memcpy(dst, &h, 2);
        }
        break;
    case 3:
        for (int32_t i = 0; i < n; i++, src += step, dst += 3) {
            uint16_t h;
            memcpy(&h, src, 2);
            memcpy(dst, &h, 2);
            dst[2] = src[2];
        }
        break;
    case 4:
        for (int32_t i = 0; i < n; i++, src += step, dst += 4) {
            uint32_t w;
            memcpy(&w, src, 4);
            memcpy(dst, &w, 4);
        }
        break;
    default:
        for (int32_t i = 0; i < n; i++, src += step, dst += c) {
            mb_copy_bytes_forward(dst, src, c);
        }
        break;
    }
}

/* A dilated window (dilation_h or dilation_w > 1): its taps are not adjacent in the input. Per
 * window the taps [kx0, kx1) of a row that fall inside the input's columns are found once; a
 * row outside the input is one fill of the zero point, an inside row a fill before kx0, the
 * taps' copies (mb_conv2d_copy_taps) and a fill after kx1. The parameters are read into locals
 * first: the int8 stores may alias *p, and GCC reloaded each field per tap (about 45
 * instructions a 3-byte tap before; about 8 now). */
static void mb_conv2d_dilated_column_s8(const mb_conv2d_s8_params *p, const int8_t *image,
                                        int32_t oy, int32_t ox, int32_t kp, int8_t *col)
{
    const int32_t c = p->input_c, fh = p->filter_h, fw = p->filter_w;
    const int32_t dh = p->dilation_h, dw = p->dilation_w;
    const int32_t in_h = p->input_h, in_w = p->input_w;
    const uint8_t zp = (uint8_t)(-p->input_offset);
    const uint8_t zero_points[4] = {zp, zp, zp, zp};
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    const int32_t row = fw * c;
    int32_t kx0 = 0, kx1 = fw;
    while (kx0 < fw && ix0 + kx0 * dw < 0) {
        kx0++;
    }
    while (kx1 > kx0 && ix0 + (kx1 - 1) * dw >= in_w) {
        kx1--;
    }
    int8_t *dst = col;
    for (int32_t ky = 0; ky < fh; ky++, dst += row) {
        const int32_t iy = iy0 + ky * dh;
        if (iy < 0 || iy >= in_h || kx1 == kx0) {
            mb_fill_bytes(dst, row, zero_points);
            continue;
        }
        if (kx0 > 0) {
            mb_fill_bytes(dst, kx0 * c, zero_points);
        }
        mb_conv2d_copy_taps(dst + kx0 * c, image + (iy * in_w + ix0 + kx0 * dw) * c, kx1 - kx0,
                            c, dw * c);
        if (kx1 < fw) {
            mb_fill_bytes(dst + kx1 * c, (fw - kx1) * c, zero_points);
        }
    }
    if (kp > fh * row) {
        memset(dst, 0, (size_t)(kp - fh * row));
    }
}

/* The part of output pixel (oy, ox)'s undilated window that lies inside the input: window
 * columns [kx0, kx1) and rows [ky0, ky1); (iy0, ix0) is the window's top-left corner in the
 * input (negative in the padding). */
typedef struct {
    int32_t iy0, ix0, kx0, kx1, ky0, ky1;
} mb_conv2d_window;

static inline mb_conv2d_window mb_conv2d_window_inside(const mb_conv2d_s8_params *p, int32_t oy,
                                                       int32_t ox)
{
    mb_conv2d_window w;
    w.iy0 = oy * p->stride_h - p->pad_top;
    w.ix0 = ox * p->stride_w - p->pad_left;
    w.kx0 = w.ix0 < 0 ? -w.ix0 : 0;
    w.ky0 = w.iy0 < 0 ? -w.iy0 : 0;
    const int32_t kx1 = p->input_w - w.ix0;
    const int32_t ky1 = p->input_h - w.iy0;
    w.kx1 = kx1 > p->filter_w ? p->filter_w : (kx1 < w.kx0 ? w.kx0 : kx1);
    w.ky1 = ky1 > p->filter_h ? p->filter_h : (ky1 < w.ky0 ? w.ky0 : ky1);
    return w;
}

/* The window of output pixel (oy, ox) of one batch image (image: its first byte) into col.
 * Static, not inline: each including kernel calls it, and the compiler keeps the call as it
 * sees fit (inlining it into the Helium loop costs registers there). conv2d_dsp.c builds its
 * columns with its own copy loops and only shares the parts above, hence "unused". */
static __attribute__((unused)) void mb_conv2d_column_s8(const mb_conv2d_s8_params *p,
                                                        const int8_t *image, int32_t oy,
                                                        int32_t ox, int32_t kp, int8_t *col)
{
    if (p->dilation_h != 1 || p->dilation_w != 1) {
        mb_conv2d_dilated_column_s8(p, image, oy, ox, kp, col);
        return;
    }
    const int32_t c = p->input_c;
    const int32_t row = p->filter_w * c;
    const int8_t zero_point = (int8_t)(-p->input_offset);
    const mb_conv2d_window w = mb_conv2d_window_inside(p, oy, ox);
    const int8_t *src = image + ((w.iy0 + w.ky0) * p->input_w + w.ix0 + w.kx0) * c;
    int8_t *dst = col;
    /* Only the library calls a pixel needs: most windows lie inside the input and have no
     * padding, and a call that sets 0 bytes still costs its call. */
    if (w.ky0 > 0) {
        memset(dst, zero_point, (size_t)(w.ky0 * row));
        dst += w.ky0 * row;
    }
    for (int32_t ky = w.ky0; ky < w.ky1; ky++, dst += row, src += p->input_w * c) {
        if (w.kx0 > 0) {
            memset(dst, zero_point, (size_t)(w.kx0 * c));
        }
        memcpy(dst + w.kx0 * c, src, (size_t)((w.kx1 - w.kx0) * c));
        if (w.kx1 < p->filter_w) {
            memset(dst + w.kx1 * c, zero_point, (size_t)((p->filter_w - w.kx1) * c));
        }
    }
    if (w.ky1 < p->filter_h) {
        memset(dst, zero_point, (size_t)((p->filter_h - w.ky1) * row));
    }
    if (kp > p->filter_h * row) {
        memset(col + p->filter_h * row, 0, (size_t)(kp - p->filter_h * row));
    }
}

#endif
