/* DEPTHWISE_CONV_2D, Helium variant "mve" (Cortex-M55): depth multiplier 1, any dilation.
 *
 * Channels innermost, int32x4 vectors: VLDRB.S32 loads 4 input (and 4 filter) bytes of one tap
 * sign-extended into the lanes, VMUL + VADD accumulate in int32 exactly as the reference (the
 * same products summed in another order; MVE has no lane-by-lane integer multiply-accumulate).
 * Blocks of 16, 8 and 4 channels keep their accumulators in registers over all the taps
 * (dw_block); the last 1-3 channels are tail-predicated (VCTP32: zeroing loads, predicated
 * store), so any channel count works. Output pixels are written in order, each after its own
 * inputs were read (the op may overlap its output with its input).
 *
 * Interior pixels start from interior_bias (the bias plus input_offset times the filter's sum)
 * and sum plain products: per tap and 16 channels 8 loads at immediate offsets from one input
 * and one filter pointer, 4 VMUL, 4 VADD. Border pixels start from bias, visit only the taps
 * inside the input and add the input offset to the input lanes (4 VADD more). The two are
 * separate functions (dw_pixel_interior, dw_pixel_border) so that the compiler cannot merge them
 * into one loop that tests the offset on every tap.
 *
 * Requantization on 4 lanes (requantize_mve.h); the compiler only picks this variant when
 * |acc| * 2^left < 2^28 and right <= 28 (depthwise_conv2d.py).
 *
 * No scratch; weights as stored. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/depthwise_conv2d.h"
#include "microbuild/kernels/depthwise_conv2d_taps.h"
#include "microbuild/kernels/requantize_mve.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))

/* acc + (x + offset) * f on 4 lanes; with_offset is a constant in every copy. */
static ALWAYS_INLINE int32x4_t mac4(int32x4_t acc, const int8_t *x, const int8_t *f,
                                    int32_t offset, const int with_offset)
{
    int32x4_t xv = vldrbq_s32(x);
    if (with_offset) {
        xv = vaddq_n_s32(xv, offset);
    }
    return vaddq_s32(acc, vmulq_s32(xv, vldrbq_s32(f)));
}

/* What every block of one call shares: the walk of the taps and the requantization. */
typedef struct {
    int32_t nky, nkx;     /* taps inside the input */
    int32_t row, frow;    /* input / filter bytes from one filter row to the next */
    int32_t xstep, fstep; /* input / filter bytes from one tap of a row to the next */
    int32_t offset;       /* added to the input values (border pixels) */
    int32_t out_offset, activation_min, activation_max;
} dw_walk;

/* Requantize 4 channels' accumulators and store them. */
static ALWAYS_INLINE void finish4(int32x4_t acc, const int32_t *multipliers,
                                  const int32_t *shifts, const dw_walk *w, int8_t *out)
{
    const mb_mve_shifts s = mb_mve_split_shifts(vldrwq_s32(shifts));
    vstrbq_s32(out, mb_mve_requantize(acc, vldrwq_s32(multipliers), s, w->out_offset,
                                      vdupq_n_s32(w->activation_min),
                                      vdupq_n_s32(w->activation_max)));
}

/* G x 4 channels of one output pixel (G accumulators in registers, the taps walked once; G is a
 * constant 4, 2 or 1 in each copy): per tap G input and G filter loads (immediate offsets from
 * one pointer each), G VMUL and G VADD (and G offset VADD at the border) for 4 * G
 * multiply-accumulates. */
static ALWAYS_INLINE void dw_block(const dw_walk *w, const int8_t *x, const int8_t *f,
                                   const int32_t *init, const int32_t *multipliers,
                                   const int32_t *shifts, int8_t *out, const int groups,
                                   const int with_offset)
{
    const int32x4_t zero = vdupq_n_s32(0);
    int32x4_t acc0 = vldrwq_s32(init);
    int32x4_t acc1 = groups >= 2 ? vldrwq_s32(init + 4) : zero;
    int32x4_t acc2 = groups >= 4 ? vldrwq_s32(init + 8) : zero;
    int32x4_t acc3 = groups >= 4 ? vldrwq_s32(init + 12) : zero;
    const int32_t offset = w->offset;
    for (int32_t ky = 0; ky < w->nky; ky++, x += w->row, f += w->frow) {
        const int8_t *xt = x;
        const int8_t *ft = f;
        for (int32_t kx = 0; kx < w->nkx; kx++, xt += w->xstep, ft += w->fstep) {
            acc0 = mac4(acc0, xt, ft, offset, with_offset);
            if (groups >= 2) {
                acc1 = mac4(acc1, xt + 4, ft + 4, offset, with_offset);
            }
            if (groups >= 4) {
                acc2 = mac4(acc2, xt + 8, ft + 8, offset, with_offset);
                acc3 = mac4(acc3, xt + 12, ft + 12, offset, with_offset);
            }
        }
    }
    finish4(acc0, multipliers, shifts, w, out);
    if (groups >= 2) {
        finish4(acc1, multipliers + 4, shifts + 4, w, out + 4);
    }
    if (groups >= 4) {
        finish4(acc2, multipliers + 8, shifts + 8, w, out + 8);
        finish4(acc3, multipliers + 12, shifts + 12, w, out + 12);
    }
}

/* One output pixel of `channels` channels: blocks of 16 channels, then one of 8 and one of 4
 * (dw_block), then the last 1-3 channels tail-predicated (VCTP32). */
static ALWAYS_INLINE void dw_pixel(const dw_walk *w, int32_t channels, const int8_t *x,
                                   const int8_t *f, const int32_t *init,
                                   const int32_t *multipliers, const int32_t *shifts,
                                   int8_t *out, const int with_offset)
{
    int32_t c = 0;
    for (; c + 16 <= channels; c += 16) {
        dw_block(w, x + c, f + c, init + c, multipliers + c, shifts + c, out + c, 4,
                 with_offset);
    }
    if (c + 8 <= channels) {
        dw_block(w, x + c, f + c, init + c, multipliers + c, shifts + c, out + c, 2,
                 with_offset);
        c += 8;
    }
    if (c + 4 <= channels) {
        dw_block(w, x + c, f + c, init + c, multipliers + c, shifts + c, out + c, 1,
                 with_offset);
        c += 4;
    }
    if (c < channels) {
        const mve_pred16_t pred = vctp32q((uint32_t)(channels - c));
        int32x4_t acc = vldrwq_z_s32(init + c, pred);
        const int8_t *xr = x + c;
        const int8_t *fr = f + c;
        for (int32_t ky = 0; ky < w->nky; ky++, xr += w->row, fr += w->frow) {
            for (int32_t kx = 0; kx < w->nkx; kx++) {
                int32x4_t xv = vldrbq_z_s32(xr + kx * w->xstep, pred);
                if (with_offset) {
                    xv = vaddq_n_s32(xv, w->offset);
                }
                const int32x4_t fv = vldrbq_z_s32(fr + kx * w->fstep, pred);
                acc = vaddq_s32(acc, vmulq_s32(xv, fv));
            }
        }
        const mb_mve_shifts s = mb_mve_split_shifts(vldrwq_z_s32(shifts + c, pred));
        const int32x4_t v = mb_mve_requantize(acc, vldrwq_z_s32(multipliers + c, pred), s,
                                              w->out_offset, vdupq_n_s32(w->activation_min),
                                              vdupq_n_s32(w->activation_max));
        vstrbq_p_s32(out + c, v, pred);
    }
}

/* A pixel whose window lies wholly inside the input: no offset adds. */
static NOINLINE void dw_pixel_interior(const dw_walk *w, int32_t channels, const int8_t *x,
                                       const int8_t *f, const int32_t *init,
                                       const int32_t *multipliers, const int32_t *shifts,
                                       int8_t *out)
{
    dw_pixel(w, channels, x, f, init, multipliers, shifts, out, 0);
}

/* A pixel at the border: only the taps inside, the input offset added to each input value. */
static NOINLINE void dw_pixel_border(const dw_walk *w, int32_t channels, const int8_t *x,
                                     const int8_t *f, const int32_t *init,
                                     const int32_t *multipliers, const int32_t *shifts,
                                     int8_t *out)
{
    dw_pixel(w, channels, x, f, init, multipliers, shifts, out, 1);
}

void mb_depthwise_conv2d_s8_mve(const mb_depthwise_conv2d_s8_params *p, const int8_t *input,
                                const int8_t *filter, const int32_t *bias,
                                const int32_t *interior_bias, const int32_t *multipliers,
                                const int32_t *shifts, int8_t *output, void *scratch)
{
    const int32_t channels = p->input_c;
    const int32_t row = p->input_w * channels;
    const int32_t frow = p->filter_w * channels;
    dw_walk w = {.row = row * p->dilation_h, .frow = frow,
                 .xstep = channels * p->dilation_w, .fstep = channels,
                 .offset = p->input_offset, .out_offset = p->output_offset,
                 .activation_min = p->activation_min, .activation_max = p->activation_max};
    int8_t *out = output;
    (void)scratch;

    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * row;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            int32_t ky_lo, ky_hi;
            mb_dw_tap_range(in_y0, p->filter_h, p->dilation_h, p->input_h, &ky_lo, &ky_hi);
            for (int32_t ox = 0; ox < p->output_w; ox++, out += channels) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                int32_t kx_lo, kx_hi;
                mb_dw_tap_range(in_x0, p->filter_w, p->dilation_w, p->input_w, &kx_lo,
                                &kx_hi);
                const int8_t *x = in_batch; /* no tap inside: only the bias counts */
                const int8_t *f = filter;
                if (ky_hi > ky_lo && kx_hi > kx_lo) {
                    x += (in_y0 + ky_lo * p->dilation_h) * row +
                         (in_x0 + kx_lo * p->dilation_w) * channels;
                    f += ky_lo * frow + kx_lo * channels;
                }
                w.nky = ky_hi - ky_lo;
                w.nkx = kx_hi - kx_lo;
                if (ky_lo == 0 && ky_hi == p->filter_h && kx_lo == 0 && kx_hi == p->filter_w) {
                    dw_pixel_interior(&w, channels, x, f, interior_bias, multipliers, shifts,
                                      out);
                } else {
                    dw_pixel_border(&w, channels, x, f, bias, multipliers, shifts, out);
                }
            }
        }
    }
}

#else
typedef int mb_depthwise_conv2d_mve_unused;
#endif
