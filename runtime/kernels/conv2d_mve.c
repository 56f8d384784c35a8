/* CONV_2D variant "mve" (Helium, Cortex-M55/M85): the reference's arithmetic with VMLADAVA.S8,
 * 16 int8 multiply-accumulates into a 32-bit scalar per instruction, on the int8 data directly.
 *
 * Like conv2d_gemm.c, each output pixel's window becomes a column (im2col) whose padding taps hold
 * the input zero point (they then add filter * (zero_point + input_offset) = 0, as the reference's
 * skipping does), padded with zeros to kp, a multiple of 16 taps; every pixel is then
 * sum(filter * column) + interior_bias. A 1x1 filter needs no copy: the column is the input
 * pixel itself, its last depth % 16 taps read with tail predication.
 *
 * Blocks of 2 pixels x 4 output channels, summed 2 channels at a time: per 16 taps, 2 column
 * loads, 2 filter loads and 4 VMLADAVA (64 multiply-accumulates in 8 instructions). The
 * filter is arranged at compile time (microbuild/compiler/ops/conv2d.py, _arrange_mve): rows
 * padded with zeros to kp taps and to a multiple of 4 channels, then per block of 4 channels
 * chunk by chunk, the 4 rows' 16 taps one after the other (one pointer walks the block, with
 * the immediate offsets VLDRB takes). The 4 channels of a pixel are requantized together on 4
 * lanes (requantize_mve.h; the compiler checks its bounds), the last block tail-predicated. With
 * a fused residual ADD, channel by channel in scalar code (finish()). Scratch: the 2 pixels'
 * int8 columns (unless read in place), then a dummy output row for the missing second pixel of
 * an odd pixel count.
 *
 * A 1x1 filter without padding and without a fused ADD takes run_direct instead: 4 pixels read
 * in place by one channel at a time (9 instructions per 64 multiply-accumulates), each block of 4
 * channels requantized once per pixel; it walks 4 pixels at once, hence the variant's
 * overlap_group of 4 (conv2d.py). */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/conv2d_column.h"
#include "microbuild/kernels/conv2d_fused_add.h"
#include "microbuild/kernels/requantize_mve.h"
#include "microbuild/quant_fast.h"

#define PX 2 /* output pixels per block */
#define CB 4 /* output channels per block */
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
        v0 = mb_conv2d_requantize2(a0 * 2 + ib2, mult, half, r);
        v1 = mb_conv2d_requantize2(a1 * 2 + ib2, mult, half, r);
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
        v0 = mb_conv2d_add_one(add, v0, other0[c]);
        v1 = mb_conv2d_add_one(add, v1, other1[c]);
    }
    out0[c] = (int8_t)v0;
    out1[c] = (int8_t)v1;
}

/* One chunk: the 2 pixels' 16 taps v0, v1 by the 2 filter rows' (w, w + 16). */
static ALWAYS_INLINE void chunk2x2(int8x16_t v0, int8x16_t v1, const int8_t *w, int32_t *s00,
                                   int32_t *s01, int32_t *s10, int32_t *s11)
{
    const int8x16_t f0 = vldrbq_s8(w);
    const int8x16_t f1 = vldrbq_s8(w + 16);
    *s00 = vmladavaq_s8(*s00, v0, f0);
    *s10 = vmladavaq_s8(*s10, v1, f0);
    *s01 = vmladavaq_s8(*s01, v0, f1);
    *s11 = vmladavaq_s8(*s11, v1, f1);
}

/* 2 pixels' columns x0, x1 by 2 filter rows (w, and w + 16 in each chunk of the arranged
 * filter: chunks 4 rows x 16 taps apart): 4 dot products of 16 * chunks taps. Per 16 taps, 4
 * loads and 4 VMLADAVA for 64 multiply-accumulates. */
static ALWAYS_INLINE void dot2x2(const int8_t *x0, const int8_t *x1, const int8_t *w,
                                 int32_t chunks, int32_t tail, int32_t *a00, int32_t *a01,
                                 int32_t *a10, int32_t *a11)
{
    int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
    for (int32_t i = 0; i < chunks; i++, x0 += 16, x1 += 16, w += CB * 16) {
        chunk2x2(vldrbq_s8(x0), vldrbq_s8(x1), w, &s00, &s01, &s10, &s11);
    }
    if (tail > 0) { /* a pixel read in place: its last taps, the lanes after them zeroed (VCTP) */
        const mve_pred16_t p = vctp8q((uint32_t)tail);
        chunk2x2(vldrbq_z_s8(x0, p), vldrbq_z_s8(x1, p), w, &s00, &s01, &s10, &s11);
    }
    *a00 = s00;
    *a01 = s01;
    *a10 = s10;
    *a11 = s11;
}

/* The window of output pixel (oy, ox) of one batch image into col, as mb_conv2d_column_s8 does,
 * for a window that lies inside the input (no padding, no dilation): each window row (filter_w *
 * input_c adjacent bytes) is copied 16 bytes at a time with predicated VLDRB/VSTRB, the last
 * chunk of a row tail-predicated (VCTP; lanes off read nothing), and the zeros up to kp are one
 * predicated VSTRB. The memcpy calls it replaces cost most of a first layer: a 3x3x3 window is
 * 3 rows of 9 bytes, ds_cnn's 10x4x1 one 10 rows of 4, and each call paid its call and its
 * size dispatch for them. Windows in the padding (the image's edges) keep the shared builder. */
static void column_s8(const mb_conv2d_s8_params *p, const int8_t *image, int32_t oy, int32_t ox,
                      int32_t kp, int8_t *col)
{
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    if (p->dilation_h != 1 || p->dilation_w != 1 || iy0 < 0 || ix0 < 0 ||
        iy0 + p->filter_h > p->input_h || ix0 + p->filter_w > p->input_w) {
        mb_conv2d_column_s8(p, image, oy, ox, kp, col);
        return;
    }
    const int32_t row = p->filter_w * p->input_c;
    const int32_t pitch = p->input_w * p->input_c;
    const int8_t *src = image + iy0 * pitch + ix0 * p->input_c;
    int8_t *dst = col;
    if (row <= 16) { /* a first layer's rows: one predicate for all of them */
        const mve_pred16_t in_row = vctp8q((uint32_t)row);
        for (int32_t ky = 0; ky < p->filter_h; ky++, src += pitch, dst += row) {
            vstrbq_p_s8(dst, vldrbq_z_s8(src, in_row), in_row);
        }
    } else {
        for (int32_t ky = 0; ky < p->filter_h; ky++, src += pitch, dst += row) {
            for (int32_t b = 0; b < row; b += 16) {
                const mve_pred16_t in_row = vctp8q((uint32_t)(row - b));
                vstrbq_p_s8(dst + b, vldrbq_z_s8(src + b, in_row), in_row);
            }
        }
    }
    vstrbq_p_s8(dst, vdupq_n_s8(0), vctp8q((uint32_t)(kp - p->filter_h * row)));
}

/* A 1x1 filter without padding: pixels are read in place, no column is built. */
static int is_direct(const mb_conv2d_s8_params *p)
{
    return p->filter_h == 1 && p->filter_w == 1 && p->pad_top == 0 && p->pad_left == 0;
}

/* The whole convolution; with_tail (a pixel read in place whose depth is not a multiple of 16)
 * is a constant in each of the two calls, so the usual case carries no tail code in its
 * blocks. */
static ALWAYS_INLINE void run(const mb_conv2d_s8_params *p, const int8_t *input,
                              const int8_t *filter, const int32_t *interior_bias,
                              const int32_t *multipliers, const int32_t *shifts,
                              const mb_residual_add_s8 *residual, int8_t *output, void *scratch,
                              int with_tail)
{
    const int32_t k = p->filter_h * p->filter_w * p->input_c;
    const int32_t kp = (k + 15) & ~(int32_t)15;
    const int32_t oc = p->output_c;
    const int32_t pixels_per_image = p->output_h * p->output_w;
    const int32_t total = p->batches * pixels_per_image;
    const int32_t image_bytes = p->input_h * p->input_w * p->input_c;
    const int direct = is_direct(p);
    /* Whole 16-tap chunks, then (a pixel read in place) the depth's last k % 16 taps. */
    const int32_t chunks = direct ? k / 16 : kp / 16;
    const int32_t tail = with_tail ? k % 16 : 0;
    const int full_range = p->activation_min == -128 && p->activation_max == 127;
    int8_t *cols = (int8_t *)scratch;
    int8_t *dummy = (int8_t *)scratch + (direct ? 0 : PX * kp);
    const int32_t out_offset = p->output_offset;
    const int32_t act_min = p->activation_min;
    const int32_t act_max = p->activation_max;
    const int32x4_t amin = vdupq_n_s32(act_min);
    const int32x4_t amax = vdupq_n_s32(act_max);
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
                column_s8(p, image, oy, ox, kp, cols + q * kp);
                col[q] = cols + q * kp;
            }
        }
        int8_t *out0 = output + n * oc;
        int8_t *out1 = np > 1 ? out0 + oc : dummy;
        const int8_t *other0 = residual != 0 ? residual->other + n * oc : 0;
        const int8_t *other1 = residual != 0 && np > 1 ? other0 + oc : other0;
        const int8_t *w = filter;
        for (int32_t c = 0; c < oc; c += CB) {
            /* a<pixel><channel>: the block's 8 dot products, two channels at a time (VMLADAVA
             * accumulates only into even registers: 4 sums fit in registers with the
             * pointers, 8 would spill). */
            int32_t a00, a01, a02, a03, a10, a11, a12, a13;
            dot2x2(col[0], col[1], w, chunks, tail, &a00, &a01, &a10, &a11);
            dot2x2(col[0], col[1], w + 32, chunks, tail, &a02, &a03, &a12, &a13);
            w += CB * kp;
            if (add != 0) { /* the fused ADD: channel by channel */
                const int32_t a0[CB] = {a00, a01, a02, a03};
                const int32_t a1[CB] = {a10, a11, a12, a13};
                for (int32_t j = 0; j < CB && c + j < oc; j++) {
                    finish(a0[j], a1[j], c + j, interior_bias, multipliers, shifts, out_offset,
                           act_min, act_max, full_range, add, other0, other1, out0, out1);
                }
                continue;
            }
            /* 4 channels at once: the vector requantization (requantize_mve.h); the last block
             * of a channel count that is not a multiple of 4 is tail-predicated. */
            const mve_pred16_t pred = vctp32q((uint32_t)(oc - c));
            const int32x4_t ib = vldrwq_z_s32(interior_bias + c, pred);
            const int32x4_t m = vldrwq_z_s32(multipliers + c, pred);
            const mb_mve_shifts s = mb_mve_split_shifts(vldrwq_z_s32(shifts + c, pred));
            int32x4_t acc0 = vsetq_lane_s32(a00, vdupq_n_s32(0), 0);
            acc0 = vsetq_lane_s32(a01, acc0, 1);
            acc0 = vsetq_lane_s32(a02, acc0, 2);
            acc0 = vsetq_lane_s32(a03, acc0, 3);
            int32x4_t acc1 = vsetq_lane_s32(a10, vdupq_n_s32(0), 0);
            acc1 = vsetq_lane_s32(a11, acc1, 1);
            acc1 = vsetq_lane_s32(a12, acc1, 2);
            acc1 = vsetq_lane_s32(a13, acc1, 3);
            vstrbq_p_s32(out0 + c, mb_mve_requantize(vaddq_s32(acc0, ib), m, s, out_offset,
                                                     amin, amax), pred);
            vstrbq_p_s32(out1 + c, mb_mve_requantize(vaddq_s32(acc1, ib), m, s, out_offset,
                                                     amin, amax), pred);
        }
    }
}

/* What every pixel block of run_direct and run_columns shares. */
typedef struct {
    const mb_conv2d_s8_params *p;
    const int8_t *filter;
    const int32_t *interior_bias, *multipliers, *shifts;
    int32_t kp, chunks;
    int32_t with_tail; /* the depth is not a multiple of 16: its last k % 16 taps, predicated */
    mve_pred16_t tail;
} direct_conv;

/* The input pixel under output pixel m (a 1x1 filter without padding). */
static inline const int8_t *direct_pixel(const mb_conv2d_s8_params *p, const int8_t *input,
                                         int32_t m)
{
    const int32_t pixels_per_image = p->output_h * p->output_w;
    const int32_t b = m / pixels_per_image;
    const int32_t oy = (m % pixels_per_image) / p->output_w;
    const int32_t ox = m % p->output_w;
    return input + b * p->input_h * p->input_w * p->input_c +
           (oy * p->stride_h * p->input_w + ox * p->stride_w) * p->input_c;
}

/* The NP pixels' sums of the 4 channels from c ([pixel][channel of the block]) plus
 * interior_bias, requantized on 4 lanes, stored with one VSTRB per pixel (the last block of a
 * channel count that is not a multiple of 4 tail-predicated). */
static ALWAYS_INLINE void store_block(const direct_conv *d, int32_t sums[4][CB], int32_t c,
                                      int8_t *out, const int np)
{
    const mb_conv2d_s8_params *p = d->p;
    const int32_t oc = p->output_c;
    const int32x4_t amin = vdupq_n_s32(p->activation_min);
    const int32x4_t amax = vdupq_n_s32(p->activation_max);
    const mve_pred16_t pred = vctp32q((uint32_t)(oc - c));
    const int32x4_t ib = vldrwq_z_s32(d->interior_bias + c, pred);
    const int32x4_t m = vldrwq_z_s32(d->multipliers + c, pred);
    const mb_mve_shifts s = mb_mve_split_shifts(vldrwq_z_s32(d->shifts + c, pred));
    for (int32_t q = 0; q < np; q++) {
        const int32x4_t acc = vaddq_s32(vldrwq_s32(sums[q]), ib);
        vstrbq_p_s32(out + q * oc + c,
                     mb_mve_requantize(acc, m, s, p->output_offset, amin, amax), pred);
    }
}

/* direct_block when every row is one chunk of 16 taps (kp == 16: a 1x1 filter on at most 16
 * input channels, or a window of at most 16 taps such as person_detect's 3x3x1): the NP pixels'
 * vectors are loaded once for all output channels, so each channel costs one filter load and NP
 * VMLADAV. The general loop reloads them for every channel and, for a depth under 16, pays the
 * predicated tail (a VPST before each load and each VMLADAV) every time: VWW's 8 -> 16 channel
 * 1x1 layer spent about 230 instructions per pixel there. */
static ALWAYS_INLINE void one_chunk_block(const direct_conv *d, const int8_t *const *x,
                                          int8_t *out, const int np)
{
    const int32_t oc = d->p->output_c;
    /* A depth under 16 read in place: the lanes after it zeroed (the filter's are zero too) */
    const mve_pred16_t in = d->with_tail ? d->tail : vctp8q(16);
    const int8x16_t v0 = vldrbq_z_s8(x[0], in);
    const int8x16_t v1 = np > 1 ? vldrbq_z_s8(x[1], in) : v0;
    const int8x16_t v2 = np > 2 ? vldrbq_z_s8(x[2], in) : v0;
    const int8x16_t v3 = np > 2 ? vldrbq_z_s8(x[3], in) : v0;
    int32_t sums[4][CB];
    const int8_t *w = d->filter;
    for (int32_t c = 0; c < oc; c += CB) {
        for (int32_t j = 0; j < CB; j++, w += 16) {
            const int8x16_t f = vldrbq_s8(w);
            sums[0][j] = vmladavq_s8(v0, f);
            if (np > 1) {
                sums[1][j] = vmladavq_s8(v1, f);
            }
            if (np > 2) {
                sums[2][j] = vmladavq_s8(v2, f);
                sums[3][j] = vmladavq_s8(v3, f);
            }
        }
        store_block(d, sums, c, out, np);
    }
}

/* NP pixels (a constant 4 or 1 in each copy; x: their input pixels or columns) by every output
 * channel, 4 channels per block, the channels one at a time: per 16 taps one filter load feeds
 * NP VMLADAVA (4 pixels: 64 multiply-accumulates in 9 instructions, every pointer
 * post-incremented; 4 sums are the most VMLADAVA can keep beside the pointers, since it
 * accumulates only into even registers). A channel's sums go to `sums`, laid out
 * [pixel][channel of the block]; after the block's 4 channels each pixel's 4 channels are one
 * vector load, requantized on 4 lanes and stored with one VSTRB (the last block of a channel
 * count that is not a multiple of 4 tail-predicated). Rows are padded with zeros to a multiple
 * of 4 channels and of 16 taps (_arrange_mve): chunk i of channel c + j of a block is at
 * block + i * 64 + j * 16. Rows of one chunk take one_chunk_block. */
static ALWAYS_INLINE void direct_block(const direct_conv *d, const int8_t *const *x, int8_t *out,
                                       const int np)
{
    if (d->kp == 16) {
        one_chunk_block(d, x, out, np);
        return;
    }
    const mb_conv2d_s8_params *p = d->p;
    const int32_t oc = p->output_c;
    int32_t sums[4][CB];
    const int8_t *block = d->filter;
    for (int32_t c = 0; c < oc; c += CB, block += CB * d->kp) {
        for (int32_t j = 0; j < CB; j++) {
            const int8_t *w = block + j * 16;
            const int8_t *x0 = x[0];
            const int8_t *x1 = np > 1 ? x[1] : x0;
            const int8_t *x2 = np > 2 ? x[2] : x0;
            const int8_t *x3 = np > 3 ? x[3] : x0;
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (int32_t i = 0; i < d->chunks; i++, w += CB * 16, x0 += 16, x1 += 16,
                         x2 += 16, x3 += 16) {
                const int8x16_t f = vldrbq_s8(w);
                s0 = vmladavaq_s8(s0, vldrbq_s8(x0), f);
                if (np > 1) {
                    s1 = vmladavaq_s8(s1, vldrbq_s8(x1), f);
                }
                if (np > 2) {
                    s2 = vmladavaq_s8(s2, vldrbq_s8(x2), f);
                    s3 = vmladavaq_s8(s3, vldrbq_s8(x3), f);
                }
            }
            if (d->with_tail) { /* the filter's padding is zero: only the input is masked */
                const int8x16_t f = vldrbq_s8(w);
                s0 = vmladavaq_p_s8(s0, vldrbq_z_s8(x0, d->tail), f, d->tail);
                if (np > 1) {
                    s1 = vmladavaq_p_s8(s1, vldrbq_z_s8(x1, d->tail), f, d->tail);
                }
                if (np > 2) {
                    s2 = vmladavaq_p_s8(s2, vldrbq_z_s8(x2, d->tail), f, d->tail);
                    s3 = vmladavaq_p_s8(s3, vldrbq_z_s8(x3, d->tail), f, d->tail);
                }
            }
            sums[0][j] = s0;
            sums[1][j] = s1;
            sums[2][j] = s2;
            sums[3][j] = s3;
        }
        store_block(d, sums, c, out, np);
    }
}

/* A 1x1 filter without padding and without a fused ADD: the pixels read in place, 4 at a time
 * (direct_block), the last 1-3 one at a time, so no pixel is computed twice (two copies of
 * direct_block keep the code small). Cheaper per output than run()'s 2 pixels x 4 channels,
 * which walks the columns twice (two channels per pass) and requantizes twice as many vectors
 * per filter block. */
static void run_direct(const direct_conv *d, const int8_t *input, int8_t *output)
{
    const mb_conv2d_s8_params *p = d->p;
    const int32_t total = p->batches * p->output_h * p->output_w;
    const int32_t oc = p->output_c;
    int32_t n = 0;
    for (; n + 4 <= total; n += 4) {
        const int8_t *x[4] = {direct_pixel(p, input, n), direct_pixel(p, input, n + 1),
                              direct_pixel(p, input, n + 2), direct_pixel(p, input, n + 3)};
        direct_block(d, x, output + n * oc, 4);
    }
    for (; n < total; n++) {
        const int8_t *x[1] = {direct_pixel(p, input, n)};
        direct_block(d, x, output + n * oc, 1);
    }
}

/* Any other filter without a fused ADD: the 4 pixels' windows become columns in scratch
 * (column_s8), which direct_block then reads as it reads the pixels of a 1x1 filter. Each
 * channel's filter row is loaded once per 4 pixels and each block of 4 channels requantized
 * once per pixel: a first layer (3x3x3 -> 8 channels: 2 chunks of 16 taps) cost about 300
 * instructions per pixel in run()'s blocks of 2 pixels x 4 channels, most of it per-block set-up
 * and the requantization of every block twice over, not multiply-accumulates. Not inlined:
 * its own copy of direct_block then leaves run_direct's register allocation as it was. */
static __attribute__((noinline)) void run_columns(const direct_conv *d, const int8_t *input, int8_t *output,
                        int8_t *cols)
{
    const mb_conv2d_s8_params *p = d->p;
    const int32_t pixels_per_image = p->output_h * p->output_w;
    const int32_t total = p->batches * pixels_per_image;
    const int32_t image_bytes = p->input_h * p->input_w * p->input_c;
    const int32_t oc = p->output_c;
    const int32_t kp = d->kp;
    const int8_t *const x[4] = {cols, cols + kp, cols + 2 * kp, cols + 3 * kp};
    int32_t n = 0;
    for (; n + 4 <= total; n += 4) {
        for (int32_t q = 0; q < 4; q++) {
            const int32_t m = n + q;
            column_s8(p, input + m / pixels_per_image * image_bytes,
                      (m % pixels_per_image) / p->output_w, m % p->output_w, kp,
                      cols + q * kp);
        }
        direct_block(d, x, output + n * oc, 4);
    }
    for (; n < total; n++) {
        column_s8(p, input + n / pixels_per_image * image_bytes,
                  (n % pixels_per_image) / p->output_w, n % p->output_w, kp, cols);
        direct_block(d, x, output + n * oc, 1);
    }
}

void mb_conv2d_s8_mve(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
                      const int32_t *bias, const int32_t *interior_bias,
                      const int32_t *multipliers, const int32_t *shifts,
                      const mb_residual_add_s8 *residual, int8_t *output, void *scratch)
{
    (void)bias;
    if (is_direct(p) && residual == 0) {
        const int32_t k = p->input_c;
        const direct_conv d = {p, filter, interior_bias, multipliers, shifts,
                               (k + 15) & ~(int32_t)15, k / 16, k % 16 != 0,
                               vctp8q((uint32_t)(k % 16))};
        run_direct(&d, input, output);
    } else if (residual == 0 && !is_direct(p)) {
        const int32_t kp = (p->filter_h * p->filter_w * p->input_c + 15) & ~(int32_t)15;
        const direct_conv d = {p, filter, interior_bias, multipliers, shifts, kp, kp / 16, 0,
                               vctp8q(0)};
        run_columns(&d, input, output, (int8_t *)scratch);
    } else if (is_direct(p) && p->input_c % 16 != 0) {
        run(p, input, filter, interior_bias, multipliers, shifts, residual, output, scratch, 1);
    } else {
        run(p, input, filter, interior_bias, multipliers, shifts, residual, output, scratch, 0);
    }
}

#else
typedef int mb_conv2d_mve_unused;
#endif
