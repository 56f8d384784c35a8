/* DEPTHWISE_CONV_2D, Helium variant "mve" (Cortex-M55): depth multiplier 1, any dilation.
 *
 * Channels innermost, 4 channels per int32x4 vector: VLDRB.S32 loads 4 input (and 4 filter)
 * bytes of one tap sign-extended into the lanes, VMUL + VADD accumulate in int32 exactly as the
 * reference (the same products summed in another order). The last group of a pixel is tail-
 * predicated (VCTP32: zeroing loads, predicated store), so any channel count works. Interior
 * pixels start from interior_bias and sum plain products; border pixels start from bias, visit
 * only the taps inside the input and add the input offset to the input lanes.
 *
 * Requantization per vector: VQRDMULH(acc << left, multiplier) is (2 * (acc << left) *
 * multiplier + 2^31) >> 32 = (acc * 2^left * multiplier + 2^30) >> 31 (it saturates only for
 * INT32_MIN * INT32_MIN; multipliers are positive). The rounding right shift, half away from
 * zero, by `right` is VRSHL(2 * hi + (hi < 0 ? -1 : 0), -(right + 1)): VRSHL rounds half up,
 * (t + 2^right) >> (right + 1). The compiler only picks this variant when |acc| * 2^left < 2^28
 * and right <= 28 (depthwise_conv2d.py), so 2 * hi cannot overflow.
 *
 * No scratch; weights as stored. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/depthwise_conv2d.h"
#include "microbuild/kernels/depthwise_conv2d_taps.h"

/* One output pixel: nky x nkx taps from input `x` and filter `f` (filter rows `row` and `frow`
 * bytes apart, taps channels * dilation_w and channels bytes apart), accumulators from `init`, `offset` added to each input
 * value (0 for an interior pixel). */
static void dw_pixel(const mb_depthwise_conv2d_s8_params *p, const int8_t *x, const int8_t *f,
                     int32_t nky, int32_t nkx, int32_t row, int32_t frow, const int32_t *init,
                     int32_t offset, const int32_t *multipliers, const int32_t *shifts,
                     int8_t *out)
{
    const int32_t channels = p->input_c;
    const int32_t xstep = channels * p->dilation_w; /* input bytes from one tap to the next */
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t amin = vdupq_n_s32(p->activation_min);
    const int32x4_t amax = vdupq_n_s32(p->activation_max);
    for (int32_t c = 0; c < channels; c += 4) {
        const mve_pred16_t pred = vctp32q((uint32_t)(channels - c));
        int32x4_t acc = vldrwq_z_s32(init + c, pred);
        const int8_t *xr = x + c;
        const int8_t *fr = f + c;
        if (offset == 0) {
            for (int32_t ky = 0; ky < nky; ky++, xr += row, fr += frow) {
                for (int32_t kx = 0; kx < nkx; kx++) {
                    const int32x4_t xv = vldrbq_z_s32(xr + kx * xstep, pred);
                    const int32x4_t fv = vldrbq_z_s32(fr + kx * channels, pred);
                    acc = vaddq_s32(acc, vmulq_s32(xv, fv));
                }
            }
        } else {
            for (int32_t ky = 0; ky < nky; ky++, xr += row, fr += frow) {
                for (int32_t kx = 0; kx < nkx; kx++) {
                    const int32x4_t xv = vaddq_n_s32(vldrbq_z_s32(xr + kx * xstep, pred),
                                                     offset);
                    const int32x4_t fv = vldrbq_z_s32(fr + kx * channels, pred);
                    acc = vaddq_s32(acc, vmulq_s32(xv, fv));
                }
            }
        }
        const int32x4_t m = vldrwq_z_s32(multipliers + c, pred);
        const int32x4_t s = vldrwq_z_s32(shifts + c, pred);
        const int32x4_t left = vmaxq_s32(s, zero);
        const int32x4_t neg_right1 = vsubq_n_s32(vminq_s32(s, zero), 1);
        const int32x4_t hi = vqrdmulhq_s32(vshlq_s32(acc, left), m);
        const int32x4_t t = vaddq_s32(vaddq_s32(hi, hi), vshrq_n_s32(hi, 31));
        int32x4_t v = vaddq_n_s32(vrshlq_s32(t, neg_right1), p->output_offset);
        v = vminq_s32(vmaxq_s32(v, amin), amax);
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
                dw_pixel(p, x, f, ky_hi - ky_lo, kx_hi - kx_lo, xrow, frow,
                         interior ? interior_bias : bias, interior ? 0 : p->input_offset,
                         multipliers, shifts, out);
            }
        }
    }
}

#else
typedef int mb_depthwise_conv2d_mve_unused;
#endif
