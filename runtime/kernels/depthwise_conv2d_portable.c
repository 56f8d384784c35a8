/* DEPTHWISE_CONV_2D, portable variant "portable" (any CPU): depth multiplier 1, any dilation.
 *
 * Channels innermost, four int32 accumulators at a time: one tap of one output pixel is a
 * contiguous run of channels in both the NHWC input and the 1HWC filter, so a block of 4 channels
 * reads 4 consecutive input bytes and 4 consecutive filter bytes per tap. Per output pixel the
 * taps inside the input are found once (ky_lo..ky_hi, kx_lo..kx_hi); an interior pixel (every tap
 * inside) starts from interior_bias and sums plain filter * input products, a border pixel starts
 * from bias and adds the input offset to each input value, exactly as the reference: the same
 * integers summed in the same int32, so the same bytes out. The requantization is
 * mb_requantize_fast (quant_fast.h), exact for the compiler's positive multipliers.
 *
 * No scratch; the weights are used as stored. */
#include "microbuild/kernels/depthwise_conv2d.h"
#include "microbuild/kernels/depthwise_conv2d_taps.h"

#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

/* One output pixel, channels [0, channels): `x` is the input pixel of the first valid tap,
 * `f` the filter tap it meets, nky x nkx valid taps, rows `row` bytes apart in the input and
 * `frow` bytes apart in the filter. */
static void dw_pixel(const mb_depthwise_conv2d_s8_params *p, const int8_t *x, const int8_t *f,
                     int32_t nky, int32_t nkx, int32_t row, int32_t frow, const int32_t *init,
                     int32_t offset, const int32_t *multipliers, const int32_t *shifts,
                     int8_t *out)
{
    const int32_t channels = p->input_c;
    const int32_t xstep = channels * p->dilation_w; /* input bytes from one tap to the next */
    const int32_t amin = p->activation_min, amax = p->activation_max;
    const int32_t zo = p->output_offset;
    int32_t c = 0;
    for (; c + 4 <= channels; c += 4) {
        int32_t a0 = init[c], a1 = init[c + 1], a2 = init[c + 2], a3 = init[c + 3];
        const int8_t *xr = x + c;
        const int8_t *fr = f + c;
        for (int32_t ky = 0; ky < nky; ky++, xr += row, fr += frow) {
            const int8_t *xp = xr;
            const int8_t *fp = fr;
            for (int32_t kx = 0; kx < nkx; kx++, xp += xstep, fp += channels) {
                a0 += (int32_t)fp[0] * ((int32_t)xp[0] + offset);
                a1 += (int32_t)fp[1] * ((int32_t)xp[1] + offset);
                a2 += (int32_t)fp[2] * ((int32_t)xp[2] + offset);
                a3 += (int32_t)fp[3] * ((int32_t)xp[3] + offset);
            }
        }
        out[c] = (int8_t)mb_clamp_i32(mb_requantize_fast(a0, multipliers[c], shifts[c]) + zo,
                                      amin, amax);
        out[c + 1] = (int8_t)mb_clamp_i32(
            mb_requantize_fast(a1, multipliers[c + 1], shifts[c + 1]) + zo, amin, amax);
        out[c + 2] = (int8_t)mb_clamp_i32(
            mb_requantize_fast(a2, multipliers[c + 2], shifts[c + 2]) + zo, amin, amax);
        out[c + 3] = (int8_t)mb_clamp_i32(
            mb_requantize_fast(a3, multipliers[c + 3], shifts[c + 3]) + zo, amin, amax);
    }
    for (; c < channels; c++) {
        int32_t a = init[c];
        const int8_t *xr = x + c;
        const int8_t *fr = f + c;
        for (int32_t ky = 0; ky < nky; ky++, xr += row, fr += frow) {
            for (int32_t kx = 0; kx < nkx; kx++) {
                a += (int32_t)fr[kx * channels] * ((int32_t)xr[kx * xstep] + offset);
            }
        }
        out[c] = (int8_t)mb_clamp_i32(mb_requantize_fast(a, multipliers[c], shifts[c]) + zo,
                                      amin, amax);
    }
}

void mb_depthwise_conv2d_s8_portable(const mb_depthwise_conv2d_s8_params *p,
                                     const int8_t *input, const int8_t *filter,
                                     const int32_t *bias, const int32_t *interior_bias,
                                     const int32_t *multipliers, const int32_t *shifts,
                                     int8_t *output, void *scratch)
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
                if (interior) {
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
