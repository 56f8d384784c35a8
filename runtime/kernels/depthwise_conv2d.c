#include "microbuild/kernels/depthwise_conv2d.h"

#include "microbuild/quant.h"

/* Output channels are processed in blocks of MB_DW_BLOCK int32 accumulators, channels innermost:
 * one filter tap is a contiguous run of channels in both the NHWC input and the 1HWO filter, so
 * the full-block loops (constant trip count, no cross-channel dependency) vectorize. */
#define MB_DW_BLOCK 8

/* The taps k in [*lo, *hi) of a window starting at input coordinate `start` that land inside
 * [0, size): start + k * dilation in range. */
static void tap_range(int32_t start, int32_t dilation, int32_t filter, int32_t size, int32_t *lo,
                      int32_t *hi)
{
    int32_t l = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    int32_t h = size - start <= 0 ? 0 : (size - start + dilation - 1) / dilation;
    h = h < filter ? h : filter;
    *lo = l < h ? l : h;
    *hi = h;
}

/* acc[j] += f[j] * (x[j] + offset) over one full block. offset is minus a zero point, in
 * [-127, 128], so x + offset is in [-255, 255] and the product in [-32640, 32640]: both fit in
 * int16, which lets a vectorizer use 16-bit multiplies. */
static void mac_block(int32_t *acc, const int8_t *x, const int8_t *f, int32_t offset)
{
    for (int32_t j = 0; j < MB_DW_BLOCK; j++) {
        const int16_t xv = (int16_t)(x[j] + offset);
        acc[j] += (int16_t)(f[j] * xv);
    }
}

/* The same over the first n channels (the last, partial block). */
static void mac_partial(int32_t *acc, const int8_t *x, const int8_t *f, int32_t offset, int32_t n)
{
    for (int32_t j = 0; j < n; j++) {
        acc[j] += (int32_t)f[j] * ((int32_t)x[j] + offset);
    }
}

/* One output pixel, depth multiplier 1: output channel c filters input channel c. `init` is the
 * bias the accumulators start from and `offset` what is added to each input value (0 with the
 * interior bias, which already holds input_offset * the sum of each channel's taps). */
static void pixel_m1(const mb_depthwise_conv2d_s8_params *p, const int8_t *in_batch,
                     const int8_t *filter, const int32_t *init, int32_t offset,
                     const int32_t *multipliers, const int32_t *shifts, int32_t in_y0,
                     int32_t in_x0, int32_t ky_lo, int32_t ky_hi, int32_t kx_lo, int32_t kx_hi,
                     int8_t *out)
{
    const int32_t channels = p->input_c;
    for (int32_t c0 = 0; c0 < channels; c0 += MB_DW_BLOCK) {
        const int32_t n = channels - c0 < MB_DW_BLOCK ? channels - c0 : MB_DW_BLOCK;
        int32_t acc[MB_DW_BLOCK];
        for (int32_t j = 0; j < n; j++) {
            acc[j] = init[c0 + j];
        }
        for (int32_t ky = ky_lo; ky < ky_hi; ky++) {
            const int32_t in_y = in_y0 + ky * p->dilation_h;
            for (int32_t kx = kx_lo; kx < kx_hi; kx++) {
                const int32_t in_x = in_x0 + kx * p->dilation_w;
                const int8_t *x = in_batch + (in_y * p->input_w + in_x) * channels + c0;
                const int8_t *f = filter + (ky * p->filter_w + kx) * channels + c0;
                if (n == MB_DW_BLOCK) {
                    mac_block(acc, x, f, offset);
                } else {
                    mac_partial(acc, x, f, offset, n);
                }
            }
        }
        for (int32_t j = 0; j < n; j++) {
            const int32_t c = c0 + j;
            const int32_t v = mb_mul_by_quantized_multiplier(acc[j], multipliers[c], (int)shifts[c]) +
                              p->output_offset;
            out[c] = (int8_t)mb_clamp_i32(v, p->activation_min, p->activation_max);
        }
    }
}

/* One output pixel, any depth multiplier: output channel oc filters input channel
 * oc / depth_multiplier. */
static void pixel_any(const mb_depthwise_conv2d_s8_params *p, const int8_t *in_batch,
                      const int8_t *filter, const int32_t *init, int32_t offset,
                      const int32_t *multipliers, const int32_t *shifts, int32_t in_y0,
                      int32_t in_x0, int32_t ky_lo, int32_t ky_hi, int32_t kx_lo, int32_t kx_hi,
                      int8_t *out)
{
    const int32_t output_c = p->input_c * p->depth_multiplier;
    for (int32_t oc = 0; oc < output_c; oc++) {
        const int32_t ic = oc / p->depth_multiplier;
        int32_t acc = init[oc];
        for (int32_t ky = ky_lo; ky < ky_hi; ky++) {
            const int32_t in_y = in_y0 + ky * p->dilation_h;
            for (int32_t kx = kx_lo; kx < kx_hi; kx++) {
                const int32_t in_x = in_x0 + kx * p->dilation_w;
                const int32_t in_v = in_batch[(in_y * p->input_w + in_x) * p->input_c + ic];
                const int32_t f_v = filter[(ky * p->filter_w + kx) * output_c + oc];
                acc += f_v * (in_v + offset);
            }
        }
        acc = mb_mul_by_quantized_multiplier(acc, multipliers[oc], (int)shifts[oc]);
        acc += p->output_offset;
        out[oc] = (int8_t)mb_clamp_i32(acc, p->activation_min, p->activation_max);
    }
}

void mb_depthwise_conv2d_s8(const mb_depthwise_conv2d_s8_params *p, const int8_t *input,
                            const int8_t *filter, const int32_t *bias,
                            const int32_t *interior_bias, const int32_t *multipliers,
                            const int32_t *shifts, int8_t *output)
{
    const int32_t output_c = p->input_c * p->depth_multiplier;
    int8_t *out = output;

    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * p->input_w * p->input_c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            int32_t ky_lo, ky_hi;
            tap_range(in_y0, p->dilation_h, p->filter_h, p->input_h, &ky_lo, &ky_hi);
            for (int32_t ox = 0; ox < p->output_w; ox++, out += output_c) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                int32_t kx_lo, kx_hi;
                tap_range(in_x0, p->dilation_w, p->filter_w, p->input_w, &kx_lo, &kx_hi);
                /* Every tap inside the input: start from the interior bias and sum plain
                 * products. Otherwise only the taps inside count, each with the input offset. */
                const int interior = ky_lo == 0 && ky_hi == p->filter_h && kx_lo == 0 &&
                                     kx_hi == p->filter_w;
                const int32_t *init = interior ? interior_bias : bias;
                const int32_t offset = interior ? 0 : p->input_offset;
                if (p->depth_multiplier == 1) {
                    pixel_m1(p, in_batch, filter, init, offset, multipliers, shifts, in_y0, in_x0,
                             ky_lo, ky_hi, kx_lo, kx_hi, out);
                } else {
                    pixel_any(p, in_batch, filter, init, offset, multipliers, shifts, in_y0,
                              in_x0, ky_lo, ky_hi, kx_lo, kx_hi, out);
                }
            }
        }
    }
}
