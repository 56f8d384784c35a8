/* The window arithmetic shared by the depthwise variants that walk output pixels with channels
 * innermost (depthwise_conv2d_portable.c, depthwise_conv2d_mve.c). */
#ifndef MICROBUILD_KERNELS_DEPTHWISE_CONV2D_TAPS_H
#define MICROBUILD_KERNELS_DEPTHWISE_CONV2D_TAPS_H

#include <stdint.h>

/* The taps k in [*lo, *hi) of a window starting at input coordinate `start`, its taps `dilation`
 * apart, that land inside [0, size). */
static inline void mb_dw_tap_range(int32_t start, int32_t filter, int32_t dilation, int32_t size,
                                   int32_t *lo, int32_t *hi)
{
    const int32_t l = start >= 0 ? 0 : (dilation - 1 - start) / dilation;
    int32_t h = size > start ? (size - start + dilation - 1) / dilation : 0;
    h = h < filter ? h : filter;
    *lo = l < h ? l : h;
    *hi = h;
}

#endif
