/* CONV_2D variant "mve" (Helium, Cortex-M55/M85): the reference's arithmetic with VMLADAVA.S8,
 * 16 int8 multiply-accumulates into a 32-bit scalar per instruction, on the int8 data directly.
 *
 * Like conv2d_gemm.c, each output pixel's window becomes a column (im2col) whose padding taps hold
 * the input zero point (they then add filter * (zero_point + input_offset) = 0, as the reference's
 * skipping does), padded with zeros to kp, a multiple of 16 taps; every pixel is then
 * sum(filter * column) + interior_bias. A 1x1 filter on a depth that is a multiple of 16 needs no
 * copy: the column is the input pixel itself.
 *
 * Blocks of 2 pixels x 2 output channels: per 16 taps, 2 column loads, 2 filter loads and 4
 * VMLADAVA (64 multiply-accumulates in 8 instructions). The filter is arranged at compile time
 * (microbuild/compiler/ops/conv2d.py, _arrange_mve): rows padded with zeros to kp taps, channels
 * padded with a zero row to an even count. Scratch: the 2 pixels' int8 columns (unless read in
 * place), then a dummy output row for the missing second pixel of an odd pixel count. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/conv2d_column.h"
#include "microbuild/quant_fast.h"

#define PX 2 /* output pixels per block */
#define CB 2 /* output channels per block */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* mb_requantize_fast(x, m, -r) for r in [1, 31], given x2 = 2 * x (the compiler accepts only
 * convs whose |x| < 2^30). The Q31 rounding (+2^30, >> 31) and the rounding right shift by r
 * (+2^(r-1), minus 1 for a negative value, >> r) compose exactly into
 *     floor((x * m + 2^30 + 2^(30 + r) - [x < 0] * 2^31) / 2^(31 + r))
 *   = (floor((2^(r-1) * 2^32 + 2x * m + 2^31) / 2^32) - [x < 0]) >> r
 * and the floor is SMMLAR with accumulator 2^(r-1). (For x < 0 whose Q31 product rounds to 0,
 * x's sign stands in for the rounded value's: both give 0.) */
static inline int32_t requantize2(int32_t x2, int32_t m, int32_t half, int32_t r)
{
#if defined(__ARM_FEATURE_DSP)
    int32_t hi;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(hi) : "r"(x2), "r"(m), "r"(half));
#else
    const int32_t hi = (int32_t)(((int64_t)x2 * m + (int64_t)half * 4294967296 + 2147483648) >>
                                 32);
#endif
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
        v0 = v0 < -128 ? -128 : (v0 > 127 ? 127 : v0);
        v1 = v1 < -128 ? -128 : (v1 > 127 ? 127 : v1);
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
    const int32_t kp = (k + 15) & ~(int32_t)15;
    const int32_t oc = p->output_c;
    const int32_t pixels_per_image = p->output_h * p->output_w;
    const int32_t total = p->batches * pixels_per_image;
    const int32_t image_bytes = p->input_h * p->input_w * p->input_c;
    const int direct = p->filter_h == 1 && p->filter_w == 1 && kp == p->input_c &&
                       p->pad_top == 0 && p->pad_left == 0;
    int8_t *cols = (int8_t *)scratch;
    int8_t *dummy = (int8_t *)scratch + (direct ? 0 : PX * kp);
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
        const int8_t *col[PX];
        for (int32_t q = 0; q < PX; q++) {
            if (q >= np) {
                col[q] = col[np - 1]; /* computed again into the dummy row */
                continue;
            }
            const int32_t m = n + q;
            const int32_t b = m / pixels_per_image;
            const int32_t oy = (m % pixels_per_image) / p->output_w;
            const int32_t ox = m % p->output_w;
            const int8_t *image = input + b * image_bytes;
            if (direct) {
                col[q] = image + (oy * p->stride_h * p->input_w + ox * p->stride_w) * p->input_c;
            } else {
                mb_conv2d_column_s8(p, image, oy, ox, kp, cols + q * kp);
                col[q] = cols + q * kp;
            }
        }
        int8_t *out0 = output + n * oc;
        int8_t *out1 = np > 1 ? out0 + oc : dummy;
        const int8_t *other0 = residual != 0 ? residual->other + n * oc : 0;
        const int8_t *other1 = residual != 0 && np > 1 ? other0 + oc : other0;
        const int8_t *f0 = filter;
        for (int32_t c = 0; c < oc; c += CB) {
            const int8_t *f1 = f0 + kp;
            const int8_t *x0 = col[0];
            const int8_t *x1 = col[1];
            int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
            for (int32_t i = 0; i < kp; i += 16) {
                const int8x16_t v0 = vldrbq_s8(x0 + i);
                const int8x16_t v1 = vldrbq_s8(x1 + i);
                const int8x16_t w0 = vldrbq_s8(f0 + i);
                const int8x16_t w1 = vldrbq_s8(f1 + i);
                a00 = vmladavaq_s8(a00, v0, w0);
                a01 = vmladavaq_s8(a01, v0, w1);
                a10 = vmladavaq_s8(a10, v1, w0);
                a11 = vmladavaq_s8(a11, v1, w1);
            }
            finish(a00, a10, c, interior_bias, multipliers, shifts, out_offset, act_min,
                   act_max, full_range, add, other0, other1, out0, out1);
            if (c + 1 < oc) {
                finish(a01, a11, c + 1, interior_bias, multipliers, shifts, out_offset,
                       act_min, act_max, full_range, add, other0, other1, out0, out1);
            }
            f0 += CB * kp;
        }
    }
}

void mb_conv2d_s8_mve(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
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
typedef int mb_conv2d_mve_unused;
#endif
