#include "microbuild/kernels/conv2d.h"

#include "microbuild/quant.h"

/* Channels computed together: each input byte loaded is used BLOCK times. */
#define BLOCK 4
/* The dot products run in chunks of this many bytes: a fixed trip count lets the compiler
 * vectorize them even at -O2. */
#define CHUNK 16

/* acc[k] += sum over i < n of f[k * f_stride + i] * x[i], for k < BLOCK. */
static void dot_block(const int8_t *x, const int8_t *f, int32_t f_stride, int32_t n,
                      int32_t *acc)
{
    const int8_t *f0 = f;
    const int8_t *f1 = f0 + f_stride;
    const int8_t *f2 = f1 + f_stride;
    const int8_t *f3 = f2 + f_stride;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t i = 0;
    for (; i + CHUNK <= n; i += CHUNK) {
        const int8_t *xc = x + i;
        const int8_t *c0 = f0 + i;
        const int8_t *c1 = f1 + i;
        const int8_t *c2 = f2 + i;
        const int8_t *c3 = f3 + i;
        for (int32_t j = 0; j < CHUNK; j++) {
            const int32_t xj = xc[j];
            a0 += c0[j] * xj;
            a1 += c1[j] * xj;
            a2 += c2[j] * xj;
            a3 += c3[j] * xj;
        }
    }
    for (; i < n; i++) {
        const int32_t xi = x[i];
        a0 += f0[i] * xi;
        a1 += f1[i] * xi;
        a2 += f2[i] * xi;
        a3 += f3[i] * xi;
    }
    acc[0] += a0;
    acc[1] += a1;
    acc[2] += a2;
    acc[3] += a3;
}

/* acc[0] += sum over i < n of f[i] * x[i]. */
static void dot_one(const int8_t *x, const int8_t *f, int32_t n, int32_t *acc)
{
    int32_t a = 0;
    int32_t i = 0;
    for (; i + CHUNK <= n; i += CHUNK) {
        const int8_t *xc = x + i;
        const int8_t *fc = f + i;
        for (int32_t j = 0; j < CHUNK; j++) {
            a += fc[j] * (int32_t)xc[j];
        }
    }
    for (; i < n; i++) {
        a += f[i] * (int32_t)x[i];
    }
    acc[0] += a;
}

static int32_t sum_s8(const int8_t *f, int32_t n)
{
    int32_t s = 0;
    for (int32_t i = 0; i < n; i++) {
        s += f[i];
    }
    return s;
}

/* First and one-past-last filter index whose tap start + k * dilation lies in [0, size). */
static void valid_range(int32_t start, int32_t dilation, int32_t taps, int32_t size, int32_t *lo,
                        int32_t *hi)
{
    int32_t a = 0;
    int32_t b = taps;
    while (a < taps && start + a * dilation < 0) {
        a++;
    }
    while (b > a && start + (b - 1) * dilation >= size) {
        b--;
    }
    *lo = a;
    *hi = b;
}

void mb_conv2d_s8(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
                  const int32_t *bias, const int32_t *interior_bias, const int32_t *multipliers,
                  const int32_t *shifts, const mb_residual_add_s8 *residual, int8_t *output)
{
    const int32_t groups = p->input_c / p->filter_c;
    const int32_t filters_per_group = p->output_c / groups;
    const int32_t filter_size = p->filter_h * p->filter_w * p->filter_c;
    /* With one group and no horizontal dilation, the valid taps of one filter row are one run of
     * contiguous bytes in both the input and the filter. */
    const int contiguous = groups == 1 && p->dilation_w == 1;
    const int32_t in_row = p->input_w * p->input_c;
    int32_t index = 0; /* output element */

    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * in_row;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            int32_t ky0, ky1;
            valid_range(in_y0, p->dilation_h, p->filter_h, p->input_h, &ky0, &ky1);
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                int32_t kx0, kx1;
                valid_range(in_x0, p->dilation_w, p->filter_w, p->input_w, &kx0, &kx1);
                const int interior = ky0 == 0 && ky1 == p->filter_h && kx0 == 0 &&
                                     kx1 == p->filter_w;
                const int32_t run = (kx1 - kx0) * p->filter_c;
                for (int32_t oc = 0; oc < p->output_c;) {
                    const int32_t group = oc / filters_per_group;
                    const int32_t n = (oc + BLOCK <= p->output_c &&
                                       (oc + BLOCK - 1) / filters_per_group == group) ? BLOCK : 1;
                    const int8_t *in_c0 = in_batch + group * p->filter_c;
                    const int8_t *f_oc = filter + oc * filter_size;
                    int32_t acc[BLOCK] = {0};
                    for (int32_t ky = ky0; ky < ky1; ky++) {
                        const int8_t *in_y = in_c0 + (in_y0 + ky * p->dilation_h) * in_row;
                        const int8_t *f_y = f_oc + ky * p->filter_w * p->filter_c;
                        for (int32_t kx = kx0; kx < kx1; kx++) {
                            const int8_t *x = in_y + (in_x0 + kx * p->dilation_w) * p->input_c;
                            const int8_t *f = f_y + kx * p->filter_c;
                            const int32_t len = contiguous ? run : p->filter_c;
                            if (n == BLOCK) {
                                dot_block(x, f, filter_size, len, acc);
                            } else {
                                dot_one(x, f, len, acc);
                            }
                            if (contiguous) {
                                break; /* the whole row was one run */
                            }
                        }
                    }
                    for (int32_t k = 0; k < n; k++) {
                        const int32_t c = oc + k;
                        int32_t a = acc[k];
                        if (interior) {
                            a += interior_bias[c];
                        } else {
                            /* input_offset times the filter over the valid taps only. */
                            int32_t taps = 0;
                            const int8_t *f_c = filter + c * filter_size;
                            for (int32_t ky = ky0; ky < ky1; ky++) {
                                for (int32_t kx = kx0; kx < kx1; kx++) {
                                    taps += sum_s8(f_c + (ky * p->filter_w + kx) * p->filter_c,
                                                   p->filter_c);
                                }
                            }
                            a += taps * p->input_offset + (bias != 0 ? bias[c] : 0);
                        }
                        a = mb_mul_by_quantized_multiplier(a, multipliers[c], (int)shifts[c]);
                        a = mb_clamp_i32(a + p->output_offset, p->activation_min,
                                         p->activation_max);
                        if (residual != 0) {
                            a = mb_add_s8_one(residual->add, a, residual->other[index + c]);
                        }
                        output[index + c] = (int8_t)a;
                    }
                    oc += n;
                }
                index += p->output_c;
            }
        }
    }
}
