/* CONV_2D variant "gemm" (portable C): the reference's arithmetic as a blocked GEMM.
 *
 * Each output pixel's window is copied once into a column in scratch (im2col), with the taps that
 * fall in the padding set to the input zero point: such a tap then contributes
 * filter * (zero_point + input_offset) = 0, exactly what the reference's skipping does, so every
 * pixel (border or not) is sum(filter * column) + interior_bias in int32. The column is padded with
 * zeros to a multiple of 4 bytes (kp). A 1x1 filter on a depth that is a multiple of 4 needs no
 * copy: the column is the input pixel itself.
 *
 * The GEMM computes 2 pixels x 4 output channels at a time (8 accumulators; each filter byte
 * loaded serves 2 pixels, each input byte 4 channels), over chunks of 16 taps with a fixed trip
 * count (vectorizable on hosts, fully unrolled with immediate offsets on small cores).
 *
 * The filter is arranged at compile time (microbuild/compiler/ops/conv2d.py, _arrange_gemm):
 * output channels padded with zero rows to a multiple of 4, each row padded with zeros to kp taps,
 * and each block of 4 channels stored chunk by chunk: for each chunk of 16 taps (the last one 4, 8
 * or 12), the 4 channels' taps of that chunk one after the other. */

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/conv2d_column.h"
#include "microbuild/kernels/conv2d_fused_add.h"
#include "microbuild/quant_fast.h"

#define PX 2    /* output pixels per block */
#define CB 4    /* output channels per block */
#define CHUNK 16

/* acc[q * CB + k] = sum over kp taps of filter row k (arranged) * column q. */
static void gemm_block(const int8_t *x0, const int8_t *x1, const int8_t *f, int32_t kp,
                       int32_t *acc)
{
    int32_t a00 = 0, a01 = 0, a02 = 0, a03 = 0;
    int32_t a10 = 0, a11 = 0, a12 = 0, a13 = 0;
    int32_t k = 0;
    for (; k + CHUNK <= kp; k += CHUNK) {
        const int8_t *c0 = x0 + k;
        const int8_t *c1 = x1 + k;
        for (int32_t j = 0; j < CHUNK; j++) {
            const int32_t v0 = c0[j];
            const int32_t v1 = c1[j];
            const int32_t w0 = f[j];
            const int32_t w1 = f[CHUNK + j];
            const int32_t w2 = f[2 * CHUNK + j];
            const int32_t w3 = f[3 * CHUNK + j];
            a00 += w0 * v0;
            a01 += w1 * v0;
            a02 += w2 * v0;
            a03 += w3 * v0;
            a10 += w0 * v1;
            a11 += w1 * v1;
            a12 += w2 * v1;
            a13 += w3 * v1;
        }
        f += CB * CHUNK;
    }
    const int32_t rem = kp - k; /* 0, 4, 8 or 12 */
    for (int32_t j = 0; j < rem; j++) {
        const int32_t v0 = x0[k + j];
        const int32_t v1 = x1[k + j];
        const int32_t w0 = f[j];
        const int32_t w1 = f[rem + j];
        const int32_t w2 = f[2 * rem + j];
        const int32_t w3 = f[3 * rem + j];
        a00 += w0 * v0;
        a01 += w1 * v0;
        a02 += w2 * v0;
        a03 += w3 * v0;
        a10 += w0 * v1;
        a11 += w1 * v1;
        a12 += w2 * v1;
        a13 += w3 * v1;
    }
    acc[0] = a00;
    acc[1] = a01;
    acc[2] = a02;
    acc[3] = a03;
    acc[4] = a10;
    acc[5] = a11;
    acc[6] = a12;
    acc[7] = a13;
}

void mb_conv2d_s8_gemm(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
                       const int32_t *bias, const int32_t *interior_bias,
                       const int32_t *multipliers, const int32_t *shifts,
                       const mb_residual_add_s8 *residual, int8_t *output, void *scratch)
{
    const int32_t k = p->filter_h * p->filter_w * p->input_c;
    const int32_t kp = (k + 3) & ~(int32_t)3;
    const int32_t oc = p->output_c;
    const int32_t pixels_per_image = p->output_h * p->output_w;
    const int32_t total = p->batches * pixels_per_image;
    const int32_t image_bytes = p->input_h * p->input_w * p->input_c;
    /* A 1x1 window never pads (SAME or VALID); with kp == depth the pixel is the column. */
    const int direct = p->filter_h == 1 && p->filter_w == 1 && kp == p->input_c &&
                       p->pad_top == 0 && p->pad_left == 0;
    int8_t *cols = (int8_t *)scratch;
    const int32_t out_offset = p->output_offset;
    const int32_t act_min = p->activation_min;
    const int32_t act_max = p->activation_max;
    /* A local copy: the output stores (int8) cannot alias it, so its fields stay in registers. */
    static const mb_add_s8_params no_add = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    mb_add_s8_params add_params = no_add;
    (void)bias;
    if (residual != 0) {
        add_params = *residual->add;
    }

    for (int32_t n = 0; n < total; n += PX) {
        const int32_t np = total - n < PX ? total - n : PX;
        const int8_t *col[PX];
        for (int32_t q = 0; q < PX; q++) {
            if (q >= np) {
                col[q] = col[np - 1]; /* computed again, not stored */
                continue;
            }
            const int32_t m = n + q;
            const int32_t b = m / pixels_per_image;
            const int32_t oy = (m % pixels_per_image) / p->output_w;
            const int32_t ox = m % p->output_w;
            const int8_t *image = input + b * image_bytes;
            if (direct) {
                col[q] = image + ((oy * p->stride_h) * p->input_w + ox * p->stride_w) *
                                     p->input_c;
            } else {
                mb_conv2d_column_s8(p, image, oy, ox, kp, cols + q * kp);
                col[q] = cols + q * kp;
            }
        }
        int8_t *out = output + n * oc;
        const int8_t *other = residual != 0 ? residual->other + n * oc : 0;
        for (int32_t c0 = 0; c0 < oc; c0 += CB) {
            int32_t acc[PX * CB];
            gemm_block(col[0], col[1], filter + c0 * kp, kp, acc);
            const int32_t nc = oc - c0 < CB ? oc - c0 : CB;
            for (int32_t j = 0; j < nc; j++) {
                const int32_t c = c0 + j;
                const int32_t mult = multipliers[c];
                const int32_t shift = shifts[c];
                const int32_t ib = interior_bias[c];
                int32_t v0, v1;
                if (shift < 0 && shift >= -31) {
                    const int32_t r = -shift;
                    const int32_t half = (int32_t)1 << (r - 1);
                    const int32_t ib2 = ib * 2;
                    v0 = mb_conv2d_requantize2(acc[j] * 2 + ib2, mult, half, r);
                    v1 = mb_conv2d_requantize2(acc[CB + j] * 2 + ib2, mult, half, r);
                } else {
                    v0 = mb_requantize_fast(acc[j] + ib, mult, shift);
                    v1 = mb_requantize_fast(acc[CB + j] + ib, mult, shift);
                }
                v0 += out_offset;
                v1 += out_offset;
                v0 = v0 < act_min ? act_min : v0;
                v1 = v1 < act_min ? act_min : v1;
                v0 = v0 > act_max ? act_max : v0;
                v1 = v1 > act_max ? act_max : v1;
                if (other != 0) {
                    v0 = mb_conv2d_add_one(&add_params, v0, other[c]);
                    if (np > 1) {
                        v1 = mb_conv2d_add_one(&add_params, v1, other[oc + c]);
                    }
                }
                out[c] = (int8_t)v0;
                if (np > 1) {
                    out[oc + c] = (int8_t)v1;
                }
            }
        }
    }
}
