/* CONV_2D variant "dsp" (Arm v7E-M DSP extension: Cortex-M4/M7/M33/M55): the reference's
 * arithmetic with SMLAD, two 16-bit multiply-accumulates per instruction.
 *
 * Like conv2d_gemm.c, each output pixel's window becomes a column (im2col) whose padding taps hold
 * the input zero point (they then add filter * (zero_point + input_offset) = 0, as the reference's
 * skipping does), padded with zeros to kp, a multiple of 4 taps; every pixel is then
 * sum(filter * column) + interior_bias. The column is sign-extended to int16 once, in scratch, and
 * reused by every output channel: each group of 4 taps x0..x3 as the two words (x0, x2) and
 * (x1, x3), which is what SXTB16 makes of a word of 4 int8 and of the same word rotated by 8. So
 * the filter stays int8 in flash and is widened on the fly, one word (4 taps) by 2 SXTB16.
 *
 * Blocks of 2 pixels x 2 output channels: per 4 taps, 2 filter words (widened once, used for both
 * pixels), 4 column words (each used for both channels) and 8 SMLAD.
 *
 * The filter is arranged at compile time (microbuild/compiler/ops/conv2d.py, _arrange_dsp):
 * channels padded with a zero row to an even count, rows padded with zeros to kp, and each pair
 * of channels stored group by group: 4 taps of the first channel, the same 4 of the second.
 * Scratch: the int16 columns of the 2 pixels, interleaved group by group (2 * kp * 2 bytes), a
 * dummy output row for the missing second pixel of an odd count (output_c rounded up to 4), then
 * an int8 im2col staging column (kp bytes; none for a 1x1 filter on a depth that is a multiple
 * of 4, whose columns are the input pixels themselves). */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <string.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/quant_fast.h"

#define PX 2 /* output pixels per block */
#define CB 2 /* output channels per block */

static inline int32_t load32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline int32_t ror8(int32_t x)
{
    const uint32_t u = (uint32_t)x;
    return (int32_t)((u >> 8) | (u << 24));
}

/* mb_requantize_fast(x, m, -r) for r in [1, 31], given x2 = 2 * x (the compiler accepts only
 * convs whose |x| < 2^30). The Q31 rounding (+2^30, >> 31) and the rounding right shift by r
 * (+2^(r-1), minus 1 for a negative value, >> r) compose exactly into
 *     floor((x * m + 2^30 + 2^(30 + r) - [x < 0] * 2^31) / 2^(31 + r))
 *   = (floor((2^(r-1) * 2^32 + 2x * m + 2^31) / 2^32) - [x < 0]) >> r
 * and the floor is SMMLAR with accumulator 2^(r-1). (For x < 0 whose Q31 product rounds to 0,
 * x's sign stands in for the rounded value's: both give 0.) */
static inline int32_t requantize2(int32_t x2, int32_t m, int32_t half, int32_t r)
{
    int32_t hi;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(hi) : "r"(x2), "r"(m), "r"(half));
    return (hi + (x2 >> 31)) >> r;
}

/* x * m * 2^shift rounded as mb_requantize_fast, for |x| < 2^30. */
static inline int32_t rescale(int32_t x, int32_t m, int32_t shift)
{
    if (shift < 0 && shift >= -31) {
        const int32_t r = -shift;
        return requantize2(x * 2, m, (int32_t)1 << (r - 1), r);
    }
    return mb_requantize_fast(x, m, shift);
}

/* mb_add_s8_one (the fused residual ADD) with the requantizations above: with left_shift <= 20
 * and input shifts <= 0 (what the compiler emits for int8), every value rescaled stays below
 * 2^29 in magnitude. Otherwise the header's own function. */
static inline int32_t add_one(const mb_add_s8_params *p, int32_t a, int32_t b)
{
    if (p->left_shift > 20 || p->input1_shift > 0 || p->input2_shift > 0) {
        return mb_add_s8_one(p, a, b);
    }
    const int32_t x1 = (p->input1_offset + a) * ((int32_t)1 << p->left_shift);
    const int32_t x2 = (p->input2_offset + b) * ((int32_t)1 << p->left_shift);
    const int32_t s1 = rescale(x1, p->input1_multiplier, p->input1_shift);
    const int32_t s2 = rescale(x2, p->input2_multiplier, p->input2_shift);
    int32_t v = rescale(s1 + s2, p->output_multiplier, p->output_shift) + p->output_offset;
    v = v < p->activation_min ? p->activation_min : v;
    return v > p->activation_max ? p->activation_max : v;
}

/* The window of output pixel (oy, ox) of one batch image as kp int8 taps. */
static void im2col(const mb_conv2d_s8_params *p, const int8_t *image, int32_t oy, int32_t ox,
                   int32_t kp, int8_t *col)
{
    const int32_t c = p->input_c;
    const int32_t row = p->filter_w * c;
    const int8_t zero_point = (int8_t)(-p->input_offset);
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    int32_t kx0 = ix0 < 0 ? -ix0 : 0;
    int32_t kx1 = p->input_w - ix0;
    int8_t *dst = col;
    if (kx1 > p->filter_w) {
        kx1 = p->filter_w;
    }
    if (kx1 < kx0) {
        kx1 = kx0;
    }
    for (int32_t ky = 0; ky < p->filter_h; ky++) {
        const int32_t iy = iy0 + ky;
        if (iy < 0 || iy >= p->input_h) {
            memset(dst, zero_point, (size_t)row);
        } else {
            memset(dst, zero_point, (size_t)(kx0 * c));
            memcpy(dst + kx0 * c, image + (iy * p->input_w + ix0 + kx0) * c,
                   (size_t)((kx1 - kx0) * c));
            memset(dst + kx1 * c, zero_point, (size_t)((p->filter_w - kx1) * c));
        }
        dst += row;
    }
    memset(dst, 0, (size_t)(kp - p->filter_h * row));
}

/* kp int8 taps to int16 pairs (x0, x2), (x1, x3) per group, every PX * 2 words. */
static void widen(const int8_t *src, int32_t groups, int32_t *dst)
{
    for (int32_t g = 0; g < groups; g++) {
        const int32_t w = load32(src);
        dst[0] = __sxtb16(w);
        dst[1] = __sxtb16(ror8(w));
        src += 4;
        dst += 2 * PX;
    }
}

/* One group of 4 taps for 2 pixels x 2 channels: 2 filter words widened by SXTB16 (the rotated
 * form gives the odd bytes), the 2 pixels' column words, 8 SMLAD. In assembly because compilers
 * do not fold the rotation into SXTB16 nor pair the loads; 13 registers at most. */
#define GROUP()                                                                                 \
    __asm__("ldrd   %[w0], %[w1], [%[f]], #8\n\t"                                               \
            "sxtb16 %[o0], %[w0], ror #8\n\t"                                                    \
            "sxtb16 %[w0], %[w0]\n\t"                                                            \
            "sxtb16 %[o1], %[w1], ror #8\n\t"                                                    \
            "sxtb16 %[w1], %[w1]\n\t"                                                            \
            "ldrd   %[xe], %[xo], [%[x]], #8\n\t"                                               \
            "smlad  %[a00], %[w0], %[xe], %[a00]\n\t"                                            \
            "smlad  %[a01], %[w1], %[xe], %[a01]\n\t"                                            \
            "smlad  %[a00], %[o0], %[xo], %[a00]\n\t"                                            \
            "smlad  %[a01], %[o1], %[xo], %[a01]\n\t"                                            \
            "ldrd   %[xe], %[xo], [%[x]], #8\n\t"                                               \
            "smlad  %[a10], %[w0], %[xe], %[a10]\n\t"                                            \
            "smlad  %[a11], %[w1], %[xe], %[a11]\n\t"                                            \
            "smlad  %[a10], %[o0], %[xo], %[a10]\n\t"                                            \
            "smlad  %[a11], %[o1], %[xo], %[a11]"                                                 \
            : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),             \
              [x] "+r"(x), [f] "+r"(f), [w0] "=&r"(w0), [w1] "=&r"(w1), [o0] "=&r"(o0),      \
              [o1] "=&r"(o1), [xe] "=&r"(xe), [xo] "=&r"(xo)                                  \
            :                                                                                 \
            : "memory")

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* The two pixels' values of output channel c: requantize, offset, clamp (SSAT when the range is
 * all of int8), the residual ADD, store. out1/other1 are the second pixel's rows (a dummy row
 * when there is none). */
static ALWAYS_INLINE void finish(int32_t a0, int32_t a1, int32_t c, const int32_t *interior_bias,
                                 const int32_t *multipliers, const int32_t *shifts,
                                 int32_t out_offset, int32_t act_min, int32_t act_max,
                                 int full_range, const mb_add_s8_params *add,
                                 const int8_t *other0, const int8_t *other1, int8_t *out0,
                                 int8_t *out1)
{
    const int32_t mult = multipliers[c];
    const int32_t shift = shifts[c];
    const int32_t ib = interior_bias[c];
    int32_t v0, v1;
    if (shift < 0 && shift >= -31) {
        const int32_t r = -shift;
        const int32_t half = (int32_t)1 << (r - 1);
        const int32_t ib2 = ib * 2;
        v0 = requantize2(a0 * 2 + ib2, mult, half, r);
        v1 = requantize2(a1 * 2 + ib2, mult, half, r);
    } else {
        v0 = mb_requantize_fast(a0 + ib, mult, shift);
        v1 = mb_requantize_fast(a1 + ib, mult, shift);
    }
    v0 += out_offset;
    v1 += out_offset;
    if (full_range) {
        v0 = __ssat(v0, 8);
        v1 = __ssat(v1, 8);
    } else {
        v0 = v0 < act_min ? act_min : v0;
        v1 = v1 < act_min ? act_min : v1;
        v0 = v0 > act_max ? act_max : v0;
        v1 = v1 > act_max ? act_max : v1;
    }
    if (add != 0) {
        v0 = add_one(add, v0, other0[c]);
        v1 = add_one(add, v1, other1[c]);
    }
    out0[c] = (int8_t)v0;
    out1[c] = (int8_t)v1;
}

/* The whole convolution; full_range is a constant in each of the two calls. */
static ALWAYS_INLINE void run(const mb_conv2d_s8_params *p, const int8_t *input,
                              const int8_t *filter, const int32_t *interior_bias,
                              const int32_t *multipliers, const int32_t *shifts,
                              const mb_residual_add_s8 *residual, int8_t *output, void *scratch,
                              int full_range)
{
    const int32_t k = p->filter_h * p->filter_w * p->input_c;
    const int32_t kp = (k + 3) & ~(int32_t)3;
    const int32_t groups = kp / 4;
    const int32_t oc = p->output_c;
    const int32_t pixels_per_image = p->output_h * p->output_w;
    const int32_t total = p->batches * pixels_per_image;
    const int32_t image_bytes = p->input_h * p->input_w * p->input_c;
    const int direct = p->filter_h == 1 && p->filter_w == 1 && kp == p->input_c &&
                       p->pad_top == 0 && p->pad_left == 0;
    int32_t *cols = (int32_t *)scratch;
    int8_t *dummy = (int8_t *)scratch + PX * kp * 2;
    int8_t *stage = dummy + ((oc + 3) & ~(int32_t)3);
    const int32_t out_offset = p->output_offset;
    const int32_t act_min = p->activation_min;
    const int32_t act_max = p->activation_max;
    /* A local copy: the output stores (int8) cannot alias it, so its fields stay in registers. */
    static const mb_add_s8_params no_add = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    mb_add_s8_params add_params = no_add;
    const mb_add_s8_params *add = 0;
    if (residual != 0) {
        add_params = *residual->add;
        add = &add_params;
    }

    for (int32_t n = 0; n < total; n += PX) {
        const int32_t np = total - n < PX ? total - n : PX;
        for (int32_t q = 0; q < PX; q++) {
            const int32_t m = n + (q < np ? q : np - 1); /* a missing pixel: the last again */
            const int32_t b = m / pixels_per_image;
            const int32_t oy = (m % pixels_per_image) / p->output_w;
            const int32_t ox = m % p->output_w;
            const int8_t *image = input + b * image_bytes;
            if (direct) {
                widen(image + (oy * p->stride_h * p->input_w + ox * p->stride_w) * p->input_c,
                      groups, cols + 2 * q);
            } else {
                im2col(p, image, oy, ox, kp, stage);
                widen(stage, groups, cols + 2 * q);
            }
        }
        int8_t *out0 = output + n * oc;
        int8_t *out1 = np > 1 ? out0 + oc : dummy;
        const int8_t *other0 = residual != 0 ? residual->other + n * oc : 0;
        const int8_t *other1 = residual != 0 && np > 1 ? other0 + oc : other0;
        const int8_t *f = filter;
        for (int32_t c = 0; c < oc; c += CB) {
            const int32_t *x = cols;
            int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
            int32_t w0, w1, o0, o1, xe, xo;
            int32_t g = groups;
            for (; g >= 2; g -= 2) {
                GROUP();
                GROUP();
            }
            if (g != 0) {
                GROUP();
            }
            /* f now points at the next channel pair. */
            finish(a00, a10, c, interior_bias, multipliers, shifts, out_offset, act_min,
                   act_max, full_range, add, other0, other1, out0, out1);
            if (c + 1 < oc) {
                finish(a01, a11, c + 1, interior_bias, multipliers, shifts, out_offset,
                       act_min, act_max, full_range, add, other0, other1, out0, out1);
            }
        }
    }
}

void mb_conv2d_s8_dsp(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
                      const int32_t *bias, const int32_t *interior_bias,
                      const int32_t *multipliers, const int32_t *shifts,
                      const mb_residual_add_s8 *residual, int8_t *output, void *scratch)
{
    (void)bias;
    if (p->activation_min == -128 && p->activation_max == 127) {
        run(p, input, filter, interior_bias, multipliers, shifts, residual, output, scratch, 1);
    } else {
        run(p, input, filter, interior_bias, multipliers, shifts, residual, output, scratch, 0);
    }
}

#else
typedef int mb_conv2d_dsp_unused;
#endif
