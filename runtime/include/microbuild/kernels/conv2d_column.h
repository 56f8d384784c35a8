/* The im2col step shared by the CONV_2D kernel variants that work on int8 columns
 * (conv2d_gemm.c, conv2d_mve.c): one output pixel's window as a column of kp int8 taps, the taps
 * in the padding holding the input zero point (so they add filter * (zero_point + input_offset)
 * = 0, as the reference's skipping does) and zeros after the window up to kp. */
#ifndef MICROBUILD_KERNELS_CONV2D_COLUMN_H
#define MICROBUILD_KERNELS_CONV2D_COLUMN_H

#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/conv2d.h"

/* A dilated window (dilation_h or dilation_w > 1): its taps are not adjacent in the input, so
 * each tap's input_c bytes are copied (or set to the zero point) one tap at a time. */
static void mb_conv2d_dilated_column_s8(const mb_conv2d_s8_params *p, const int8_t *image,
                                        int32_t oy, int32_t ox, int32_t kp, int8_t *col)
{
    const int32_t c = p->input_c;
    const int8_t zero_point = (int8_t)(-p->input_offset);
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    int8_t *dst = col;
    for (int32_t ky = 0; ky < p->filter_h; ky++) {
        const int32_t iy = iy0 + ky * p->dilation_h;
        for (int32_t kx = 0; kx < p->filter_w; kx++, dst += c) {
            const int32_t ix = ix0 + kx * p->dilation_w;
            if (iy < 0 || iy >= p->input_h || ix < 0 || ix >= p->input_w) {
                memset(dst, zero_point, (size_t)c);
            } else {
                memcpy(dst, image + (iy * p->input_w + ix) * c, (size_t)c);
            }
        }
    }
    memset(dst, 0, (size_t)(kp - p->filter_h * p->filter_w * c));
}

/* The window of output pixel (oy, ox) of one batch image (image: its first byte) into col.
 * Static, not inline: each including kernel calls it, and the compiler keeps the call as it
 * sees fit (inlining it into the Helium loop costs registers there). */
static void mb_conv2d_column_s8(const mb_conv2d_s8_params *p, const int8_t *image, int32_t oy,
                                int32_t ox, int32_t kp, int8_t *col)
{
    if (p->dilation_h != 1 || p->dilation_w != 1) {
        mb_conv2d_dilated_column_s8(p, image, oy, ox, kp, col);
        return;
    }
    const int32_t c = p->input_c;
    const int32_t row = p->filter_w * c;
    const int8_t zero_point = (int8_t)(-p->input_offset);
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    int32_t kx0 = ix0 < 0 ? -ix0 : 0;
    int32_t kx1 = p->input_w - ix0;
    int8_t *dst = col;
    if (kx1 > p->filter_w) {
        kx1 = p->filter_w;
    }
    if (kx1 < kx0) {
        kx1 = kx0;
    }
    for (int32_t ky = 0; ky < p->filter_h; ky++) {
        const int32_t iy = iy0 + ky;
        if (iy < 0 || iy >= p->input_h) {
            memset(dst, zero_point, (size_t)row);
        } else {
            memset(dst, zero_point, (size_t)(kx0 * c));
            memcpy(dst + kx0 * c, image + (iy * p->input_w + ix0 + kx0) * c,
                   (size_t)((kx1 - kx0) * c));
            memset(dst + kx1 * c, zero_point, (size_t)((p->filter_w - kx1) * c));
        }
        dst += row;
    }
    memset(dst, 0, (size_t)(kp - p->filter_h * row));
}

#endif
