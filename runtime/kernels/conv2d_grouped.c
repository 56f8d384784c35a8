/* Grouped CONV_2D (int8), portable variant "grouped": the input's channels split into
 * input_c / filter_c groups, each filtered by its own output_c / groups filters. The reference
 * (conv2d.c) blocks 4 channels only within a group and recomputes the border pixels' input
 * offset term from the filter; here each output pixel's window is clipped to the input once and
 * gathered per group into an int16 column of x + input_offset (0 for taps in the padding, which
 * the reference skips), each column value shared by a pair of channels of its group. The sums
 * are TFLM's int32 sums of the same products, then TFLM's requantization in the fast form of
 * quant_fast.h (exact: conv2d.py checks the sums' bound): the same bytes out. A pixel whose
 * window lies wholly inside the input reads its taps in place through a table of offsets built
 * once per call; one partly in the padding through the same table into the column, a tap's row
 * and column (two more tables) saying whether it is inside. Scratch: the column (filter_h *
 * filter_w * filter_c int16, rounded up to an even count), the offsets (as many int32), the
 * rows and the columns (as many bytes each; conv2d.py takes filters of at most 255 x 255). Any stride,
 * padding and dilation; a fused residual ADD as the reference applies it. */
#include <stdint.h>

#include "microbuild/kernels/add.h"
#include "microbuild/kernels/conv2d.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

static void grp_range(int32_t start, int32_t step, int32_t taps, int32_t n, int32_t *k0,
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

static inline int8_t grp_finish(const mb_conv2d_s8_params *p, int32_t acc, int32_t c,
                                const int32_t *bias, const int32_t *multipliers,
                                const int32_t *shifts, const mb_residual_add_s8 *residual,
                                int32_t index)
{
    if (bias != 0) {
        acc += bias[c];
    }
    int32_t a = mb_requantize_fast32(acc, multipliers[c], shifts[c]);
    a = mb_clamp_i32(a + p->output_offset, p->activation_min, p->activation_max);
    if (residual != 0) {
        a = mb_add_s8_one(residual->add, a, residual->other[index + c]);
    }
    return (int8_t)a;
}

void mb_conv2d_s8_grouped(const mb_conv2d_s8_params *p, const int8_t *input,
                          const int8_t *filter, const int32_t *bias,
                          const int32_t *interior_bias, const int32_t *multipliers,
                          const int32_t *shifts, const mb_residual_add_s8 *residual,
                          int8_t *output, void *scratch)
{
    (void)interior_bias;
    const int32_t fc = p->filter_c;
    const int32_t depth = p->input_c;
    const int32_t groups = depth / fc;
    const int32_t per_group = p->output_c / groups;
    const int32_t k = p->filter_h * p->filter_w * fc; /* filter elements per channel */
    const int32_t off = p->input_offset;
    int16_t *col = (int16_t *)scratch;
    int32_t *tab = (int32_t *)(void *)(col + ((k + 1) & ~(int32_t)1));
    uint8_t *tky = (uint8_t *)(tab + k);
    uint8_t *tkx = tky + k;
    /* Tap t's input element relative to the window's first, and its filter row and column. */
    for (int32_t ky = 0, t = 0; ky < p->filter_h; ky++) {
        for (int32_t kx = 0; kx < p->filter_w; kx++) {
            for (int32_t c = 0; c < fc; c++, t++) {
                tab[t] = (ky * p->dilation_h * p->input_w + kx * p->dilation_w) * depth + c;
                tky[t] = (uint8_t)ky;
                tkx[t] = (uint8_t)kx;
            }
        }
    }
    int32_t index = 0;
    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *image = input + b * p->input_h * p->input_w * depth;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            int32_t ky0, ky1;
            grp_range(y0, p->dilation_h, p->filter_h, p->input_h, &ky0, &ky1);
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                int32_t kx0, kx1;
                grp_range(x0, p->dilation_w, p->filter_w, p->input_w, &kx0, &kx1);
                const int8_t *in0 = image + ((y0 + ky0 * p->dilation_h) * p->input_w + x0 +
                                             kx0 * p->dilation_w) * depth;
                const int interior = ky0 == 0 && ky1 == p->filter_h && kx0 == 0 &&
                                     kx1 == p->filter_w;
                int32_t o = 0;
                for (int32_t g = 0; g < groups; g++) {
                    const int8_t *xg = in0 + g * fc;
                    const int32_t end = o + per_group;
                    if (interior) {
                        /* Every tap inside the input: tap t is xg[tab[t]], no column. */
                        for (; o + 2 <= end; o += 2) {
                            const int8_t *f0 = filter + o * k;
                            const int8_t *f1 = f0 + k;
                            int32_t a0 = 0, a1 = 0;
                            for (int32_t t = 0; t < k; t++) {
                                const int32_t v = xg[tab[t]] + off;
                                a0 += f0[t] * v;
                                a1 += f1[t] * v;
                            }
                            output[index + o] = grp_finish(p, a0, o, bias, multipliers, shifts,
                                                           residual, index);
                            output[index + o + 1] = grp_finish(p, a1, o + 1, bias, multipliers,
                                                               shifts, residual, index);
                        }
                        if (o < end) {
                            const int8_t *f0 = filter + o * k;
                            int32_t a0 = 0;
                            for (int32_t t = 0; t < k; t++) {
                                a0 += f0[t] * (xg[tab[t]] + off);
                            }
                            output[index + o] = grp_finish(p, a0, o, bias, multipliers, shifts,
                                                           residual, index);
                            o++;
                        }
                        continue;
                    }
                    /* A window partly in the padding: the column, 0 for the taps outside. */
                    const int32_t base = (y0 * p->input_w + x0) * depth + g * fc;
                    const uint32_t rows = (uint32_t)(ky1 - ky0), cols = (uint32_t)(kx1 - kx0);
                    for (int32_t t = 0; t < k; t++) {
                        const int inside = (uint32_t)(tky[t] - ky0) < rows &&
                                           (uint32_t)(tkx[t] - kx0) < cols;
                        col[t] = (int16_t)(inside ? image[base + tab[t]] + off : 0);
                    }
                    for (; o + 2 <= end; o += 2) {
                        const int8_t *f0 = filter + o * k;
                        const int8_t *f1 = f0 + k;
                        int32_t a0 = 0, a1 = 0;
                        for (int32_t t = 0; t < k; t++) {
                            const int32_t v = col[t];
                            a0 += f0[t] * v;
                            a1 += f1[t] * v;
                        }
                        output[index + o] = grp_finish(p, a0, o, bias, multipliers, shifts,
                                                       residual, index);
                        output[index + o + 1] = grp_finish(p, a1, o + 1, bias, multipliers,
                                                           shifts, residual, index);
                    }
                    if (o < end) {
                        const int8_t *f0 = filter + o * k;
                        int32_t a0 = 0;
                        for (int32_t t = 0; t < k; t++) {
                            a0 += f0[t] * (int32_t)col[t];
                        }
                        output[index + o] = grp_finish(p, a0, o, bias, multipliers, shifts,
                                                       residual, index);
                        o++;
                    }
                }
                index += p->output_c;
            }
        }
    }
}
