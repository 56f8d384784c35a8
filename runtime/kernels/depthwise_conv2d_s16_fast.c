/* DEPTHWISE_CONV_2D with 16-bit activations (16x8), portable variant "fast_s16".
 *
 * The reference (conv2d_s16.c) tests every tap against the input's bounds and sums in int64.
 * Here each output pixel's window is first clipped to the input (the taps in the padding add
 * nothing in the reference either), so the tap loops run without tests, and each channel's sum
 * runs in int32: exact for at most 511 taps (each product is at most 2^15 * 2^7 = 2^22 in
 * magnitude; depthwise_conv2d.py refuses larger windows), so it is the reference's exact int64
 * sum. The requantization's constants are derived once per call into scratch (16 bytes per
 * output channel, conv_s16_requant.h). Any depth multiplier, stride, padding and dilation. */
#include <stdint.h>

#include "microbuild/kernels/conv_s16_requant.h"
#include "microbuild/kernels/depthwise_conv2d.h"

/* The first tap k with 0 <= start + k * step, and one past the last with start + k * step < n. */
static void dw16_range(int32_t start, int32_t step, int32_t taps, int32_t n, int32_t *k0,
                       int32_t *k1)
{
    int32_t a = 0, b = taps;
    while (a < b && start + a * step < 0) {
        a++;
    }
    while (b > a && start + (b - 1) * step >= n) {
        b--;
    }
    *k0 = a;
    *k1 = b;
}

void mb_depthwise_conv2d_s16_fast(const mb_depthwise_conv2d_s8_params *p, const int16_t *input,
                                  const int8_t *filter, const int64_t *bias,
                                  const int32_t *multipliers, const int32_t *shifts,
                                  int16_t *output, void *scratch)
{
    const int32_t dm = p->depth_multiplier;
    const int32_t depth = p->input_c;
    const int32_t oc = depth * dm;
    const int32_t lo = p->activation_min, hi = p->activation_max;
    const int32_t x_step = p->dilation_w * depth; /* input elements between taps of a row */
    const int32_t f_step = oc;                    /* filter elements between taps of a row */
    mb_s16_channel *table = (mb_s16_channel *)scratch;
    mb_s16_channels(bias, multipliers, shifts, oc, table);
    int16_t *out = output;
    for (int32_t b = 0; b < p->batches; b++) {
        const int16_t *image = input + b * p->input_h * p->input_w * depth;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            int32_t ky0, ky1;
            dw16_range(y0, p->dilation_h, p->filter_h, p->input_h, &ky0, &ky1);
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                int32_t kx0, kx1;
                dw16_range(x0, p->dilation_w, p->filter_w, p->input_w, &kx0, &kx1);
                const int32_t n = kx1 - kx0;
                /* The first valid tap's input pixel and filter tap (channel 0). */
                const int16_t *in0 = image + ((y0 + ky0 * p->dilation_h) * p->input_w +
                                              x0 + kx0 * p->dilation_w) * depth;
                const int8_t *f0 = filter + (ky0 * p->filter_w + kx0) * oc;
                const int32_t in_row = p->dilation_h * p->input_w * depth;
                const int32_t f_row = p->filter_w * oc;
                int32_t o = 0;
                /* Blocks of 4 output channels, their sums in registers; lane j reads input
                 * channel (o + j) / dm. */
                for (; o + 4 <= oc; o += 4) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    const int32_t c0 = o / dm;
                    const int32_t i1 = (o + 1) / dm - c0, i2 = (o + 2) / dm - c0;
                    const int32_t i3 = (o + 3) / dm - c0;
                    const int16_t *xr = in0 + c0;
                    const int8_t *fr = f0 + o;
                    for (int32_t ky = ky0; ky < ky1; ky++) {
                        const int16_t *x = xr;
                        const int8_t *f = fr;
                        if (dm == 1) {
                            for (int32_t i = 0; i < n; i++, x += x_step, f += f_step) {
                                a0 += (int32_t)f[0] * x[0];
                                a1 += (int32_t)f[1] * x[1];
                                a2 += (int32_t)f[2] * x[2];
                                a3 += (int32_t)f[3] * x[3];
                            }
                        } else {
                            for (int32_t i = 0; i < n; i++, x += x_step, f += f_step) {
                                a0 += (int32_t)f[0] * x[0];
                                a1 += (int32_t)f[1] * x[i1];
                                a2 += (int32_t)f[2] * x[i2];
                                a3 += (int32_t)f[3] * x[i3];
                            }
                        }
                        xr += in_row;
                        fr += f_row;
                    }
                    out[o] = mb_s16_finish32(a0, &table[o], lo, hi);
                    out[o + 1] = mb_s16_finish32(a1, &table[o + 1], lo, hi);
                    out[o + 2] = mb_s16_finish32(a2, &table[o + 2], lo, hi);
                    out[o + 3] = mb_s16_finish32(a3, &table[o + 3], lo, hi);
                }
                for (; o < oc; o++) {
                    int32_t acc = 0;
                    const int16_t *xr = in0 + o / dm;
                    const int8_t *fr = f0 + o;
                    for (int32_t ky = ky0; ky < ky1; ky++) {
                        const int16_t *x = xr;
                        const int8_t *f = fr;
                        for (int32_t i = 0; i < n; i++, x += x_step, f += f_step) {
                            acc += (int32_t)*f * (int32_t)*x;
                        }
                        xr += in_row;
                        fr += f_row;
                    }
                    out[o] = mb_s16_finish32(acc, &table[o], lo, hi);
                }
                out += oc;
            }
        }
    }
}
