/* DEPTHWISE_CONV_2D, Helium variant "mve" (Cortex-M55): depth multiplier 1, any dilation.
 *
 * Channels innermost, int32x4 vectors: VLDRB.S32 loads 4 input (and 4 filter) bytes of one tap
 * sign-extended into the lanes, VMUL + VADD accumulate in int32 exactly as the reference (the
 * same products summed in another order). Blocks of 16, 8 and 4 channels keep their
 * accumulators in registers over all the taps (dw_block); the last 1-3 channels are
 * tail-predicated (VCTP32: zeroing loads, predicated store), so any channel count works.
 * Interior pixels start from interior_bias and sum plain products; border pixels start from
 * bias, visit only the taps inside the input and add the input offset to the input lanes.
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

/* acc += (x + offset) * f on 4 lanes; the offset add vanishes when offset is the constant 0. */
static ALWAYS_INLINE int32x4_t mac4(int32x4_t acc, const int8_t *x, const int8_t *f,
                                    int32_t offset)
{
    int32x4_t xv = vldrbq_s32(x);
    if (offset != 0) {
        xv = vaddq_n_s32(xv, offset);
    }
    return vaddq_s32(acc, vmulq_s32(xv, vldrbq_s32(f)));
}

/* Requantize 4 channels' accumulators and store them. */
static ALWAYS_INLINE void finish4(int32x4_t acc, const int32_t *multipliers,
                                  const int32_t *shifts, int32_t out_offset, int32x4_t amin,
                                  int32x4_t amax, int8_t *out)
{
    const mb_mve_shifts s = mb_mve_split_shifts(vldrwq_s32(shifts));
    vstrbq_s32(out, mb_mve_requantize(acc, vldrwq_s32(multipliers), s, out_offset, amin, amax));
}

/* G x 4 channels of one output pixel (G accumulators in registers, the taps walked once; G is a
 * constant 4, 2 or 1 in each copy): per tap G input and G filter loads (VLDRB.S32 with immediate
 * offsets from one pointer each), G VMUL and G VADD for 4 * G multiply-accumulates. Taps as in
 * dw_pixel. */
static ALWAYS_INLINE void dw_block(const int8_t *x, const int8_t *f, int32_t nky, int32_t nkx,
                                   int32_t row, int32_t frow, int32_t xstep, int32_t fstep,
                                   const int32_t *init, int32_t offset,
                                   const int32_t *multipliers, const int32_t *shifts,
                                   int32_t out_offset, int32x4_t amin, int32x4_t amax,
                                   int8_t *out, const int groups)
{
    const int32x4_t zero = vdupq_n_s32(0);
    int32x4_t acc0 = vldrwq_s32(init);
    int32x4_t acc1 = groups >= 2 ? vldrwq_s32(init + 4) : zero;
    int32x4_t acc2 = groups >= 4 ? vldrwq_s32(init + 8) : zero;
    int32x4_t acc3 = groups >= 4 ? vldrwq_s32(init + 12) : zero;
    for (int32_t ky = 0; ky < nky; ky++, x += row, f += frow) {
        const int8_t *xt = x;
        const int8_t *ft = f;
        for (int32_t kx = 0; kx < nkx; kx++, xt += xstep, ft += fstep) {
            acc0 = mac4(acc0, xt, ft, offset);
            if (groups >= 2) {
                acc1 = mac4(acc1, xt + 4, ft + 4, offset);
            }
            if (groups >= 4) {
                acc2 = mac4(acc2, xt + 8, ft + 8, offset);
                acc3 = mac4(acc3, xt + 12, ft + 12, offset);
            }
        }
    }
    finish4(acc0, multipliers, shifts, out_offset, amin, amax, out);
    if (groups >= 2) {
        finish4(acc1, multipliers + 4, shifts + 4, out_offset, amin, amax, out + 4);
    }
    if (groups >= 4) {
        finish4(acc2, multipliers + 8, shifts + 8, out_offset, amin, amax, out + 8);
        finish4(acc3, multipliers + 12, shifts + 12, out_offset, amin, amax, out + 12);
    }
}

/* One output pixel: nky x nkx taps from input `x` and filter `f` (filter rows `row` and `frow`
 * bytes apart, taps channels * dilation_w and channels bytes apart), accumulators from `init`,
 * `offset` added to each input value (0 for an interior pixel). Blocks of 16 channels, then one
 * of 8 and one of 4 (dw_block), then the last 1-3 channels tail-predicated (VCTP32). */
static ALWAYS_INLINE void dw_pixel(const mb_depthwise_conv2d_s8_params *p, const int8_t *x,
                                   const int8_t *f, int32_t nky, int32_t nkx, int32_t row,
                                   int32_t frow, const int32_t *init, int32_t offset,
                                   const int32_t *multipliers, const int32_t *shifts,
                                   int8_t *out)
{
    const int32_t channels = p->input_c;
    const int32_t xstep = channels * p->dilation_w; /* input bytes from one tap to the next */
    const int32x4_t amin = vdupq_n_s32(p->activation_min);
    const int32x4_t amax = vdupq_n_s32(p->activation_max);
    int32_t c = 0;
    for (; c + 16 <= channels; c += 16) {
        dw_block(x + c, f + c, nky, nkx, row, frow, xstep, channels, init + c, offset,
                 multipliers + c, shifts + c, p->output_offset, amin, amax, out + c, 4);
    }
    if (c + 8 <= channels) {
        dw_block(x + c, f + c, nky, nkx, row, frow, xstep, channels, init + c, offset,
                 multipliers + c, shifts + c, p->output_offset, amin, amax, out + c, 2);
        c += 8;
    }
    if (c + 4 <= channels) {
        dw_block(x + c, f + c, nky, nkx, row, frow, xstep, channels, init + c, offset,
                 multipliers + c, shifts + c, p->output_offset, amin, amax, out + c, 1);
        c += 4;
    }
    if (c < channels) {
        const mve_pred16_t pred = vctp32q((uint32_t)(channels - c));
        int32x4_t acc = vldrwq_z_s32(init + c, pred);
        const int8_t *xr = x + c;
        const int8_t *fr = f + c;
        for (int32_t ky = 0; ky < nky; ky++, xr += row, fr += frow) {
            for (int32_t kx = 0; kx < nkx; kx++) {
                int32x4_t xv = vldrbq_z_s32(xr + kx * xstep, pred);
                if (offset != 0) {
                    xv = vaddq_n_s32(xv, offset);
                }
                const int32x4_t fv = vldrbq_z_s32(fr + kx * channels, pred);
                acc = vaddq_s32(acc, vmulq_s32(xv, fv));
            }
        }
        const mb_mve_shifts s = mb_mve_split_shifts(vldrwq_z_s32(shifts + c, pred));
        const int32x4_t v = mb_mve_requantize(acc, vldrwq_z_s32(multipliers + c, pred), s,
                                              p->output_offset, amin, amax);
        vstrbq_p_s32(out + c, v, pred);
    }
}

void mb_depthwise_conv2d_s8_mve(const mb_depthwise_conv2d_s8_params *p, const int8_t *input,
                                const int8_t *filter, const int32_t *bias,
                                const int32_t *interior_bias, const int32_t *multipliers,
                                const int32_t *shifts, int8_t *output, void *scratch)
{
    const int32_t channels = p->input_c;
    const int32_t row = p->input_w * channels;
    const int32_t frow = p->filter_w * channels;
    const int32_t xrow = row * p->dilation_h; /* input bytes from one filter row to the next */
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
                const int interior = ky_lo == 0 && ky_hi == p->filter_h && kx_lo == 0 &&
                                     kx_hi == p->filter_w;
                const int8_t *x = in_batch; /* no tap inside: only the bias counts */
                const int8_t *f = filter;
                if (ky_hi > ky_lo && kx_hi > kx_lo) {
                    x += (in_y0 + ky_lo * p->dilation_h) * row +
                         (in_x0 + kx_lo * p->dilation_w) * channels;
                    f += ky_lo * frow + kx_lo * channels;
                }
                if (interior) { /* separate copies: the offset-free one without the adds */
                    dw_pixel(p, x, f, ky_hi - ky_lo, kx_hi - kx_lo, xrow, frow, interior_bias,
                             0, multipliers, shifts, out);
                } else {
                    dw_pixel(p, x, f, ky_hi - ky_lo, kx_hi - kx_lo, xrow, frow, bias,
                             p->input_offset, multipliers, shifts, out);
                }
            }
        }
    }
}

#else
typedef int mb_depthwise_conv2d_mve_unused;
#endif
