/* DEPTHWISE_CONV_2D, Helium variant "mve" (Cortex-M55): depth multiplier 1, any dilation.
 *
 * Channels innermost. Blocks of 8 channels load each tap's input and filter bytes
 * sign-extended into 8 int16 lanes (VLDRB.S16) and multiply them with VMULLB / VMULLT, which
 * give the int32 products of the even and of the odd lanes: per tap and 8 channels 2 loads,
 * 2 widening multiplies and 2 VADD (MVE has no lane-by-lane integer multiply-accumulate). The
 * accumulators thus hold channels 0,2,4,6 and 1,3,5,7 of a block; their initial values, the
 * multipliers and the split shifts are read in that order from the block's table, laid out at
 * compile time (enum dw_table; one VLDRW each, nothing gathered or split at run time), and
 * the two requantized halves are put back in channel order by VMOVNB / VMOVNT before one
 * narrowing store. int16 lanes are exact: an input byte plus the input offset lies in
 * [-255, 256] and the products are int32. A block of 4 channels uses int32 lanes (VLDRB.S32,
 * VMUL, VADD); the last 1-3 channels are tail-predicated (VCTP32: zeroing loads, predicated
 * store), so any channel count works. All sums are the reference's products in another order.
 *
 * Each output row is walked as: border pixels, the run of interior pixels in one call
 * (dw_run_interior: no per-pixel tap ranges, no call per pixel), border pixels. In a run each
 * block of 8 channels visits all its pixels before the next block starts. Interior pixels
 * start from interior_bias (the bias plus input_offset times the filter's sum) and sum plain
 * products; a 3-tap-wide filter has its tap loop unrolled. Border pixels start from bias,
 * visit only the taps inside the input (a clipped tap range, not a test per tap) and add the
 * input offset to the input lanes. Every channel sees its output pixels in order, each written
 * after its own inputs were read; since a run's blocks do not, an output over its input must
 * start a whole number of pixels below it (overlap_whole_pixels in depthwise_conv2d.py): a
 * write then only lands on the same channels of an input pixel no later pixel reads.
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
#define NOINLINE __attribute__((noinline))

/* acc + (x + offset) * f on 4 lanes; with_offset is a constant in every copy. */
static ALWAYS_INLINE int32x4_t mac4(int32x4_t acc, const int8_t *x, const int8_t *f,
                                    int32_t offset, const int with_offset)
{
    int32x4_t xv = vldrbq_s32(x);
    if (with_offset) {
        xv = vaddq_n_s32(xv, offset);
    }
    return vaddq_s32(acc, vmulq_s32(xv, vldrbq_s32(f)));
}

/* 8 channels of one tap: the int32 products of the even lanes added to *even, of the odd lanes
 * to *odd. */
static ALWAYS_INLINE void mac8(int32x4_t *even, int32x4_t *odd, const int8_t *x, const int8_t *f,
                               int16_t offset, const int with_offset)
{
    int16x8_t xv = vldrbq_s16(x);
    if (with_offset) {
        xv = vaddq_n_s16(xv, offset);
    }
    const int16x8_t fv = vldrbq_s16(f);
    *even = vaddq_s32(*even, vmullbq_int_s16(xv, fv));
    *odd = vaddq_s32(*odd, vmulltq_int_s16(xv, fv));
}

/* What every block of one call shares: the walk of the taps and the requantization. */
typedef struct {
    int32_t nky, nkx;     /* taps inside the input */
    int32_t row, frow;    /* input / filter bytes from one filter row to the next */
    int32_t xstep, fstep; /* input / filter bytes from one tap of a row to the next */
    int32_t offset;       /* added to the input values (border pixels) */
    int32_t out_offset, activation_min, activation_max;
} dw_walk;

/* Requantize 4 lanes' accumulators with the multipliers and shifts already loaded. */
static ALWAYS_INLINE int32x4_t requantize4(int32x4_t acc, int32x4_t multipliers,
                                           int32x4_t shifts, const dw_walk *w)
{
    return mb_mve_requantize(acc, multipliers, mb_mve_split_shifts(shifts), w->out_offset,
                             vdupq_n_s32(w->activation_min), vdupq_n_s32(w->activation_max));
}

/* Requantize 4 channels' accumulators and store them. */
static ALWAYS_INLINE void finish4(int32x4_t acc, const int32_t *multipliers,
                                  const int32_t *shifts, const dw_walk *w, int8_t *out)
{
    vstrbq_s32(out, requantize4(acc, vldrwq_s32(multipliers), vldrwq_s32(shifts), w));
}

/* The constants of one block of 8 channels, laid out at compile time by depthwise_conv2d.py
 * (mve_block_tables) in the order of the block's accumulators (even lanes, odd lanes), each a
 * vector read with one VLDRW: initial values of interior and of border pixels, multipliers,
 * split shifts (mb_mve_split_shifts), and the activation bounds as 8 int16 lanes for
 * store8's clamp. The tables follow the interior biases (rounded up to 4 channels) in the
 * interior_bias array, one per whole block of 8 channels. */
enum dw_table { INIT_E, INIT_O, BIAS_E, BIAS_O, MULT_E, MULT_O, LEFT_E, LEFT_O, NEG_RIGHT1_E,
                NEG_RIGHT1_O, AMIN, AMAX, K_VECTORS };
#define DW_TABLE_INT32 (K_VECTORS * 4)

/* Requantize a block's even / odd accumulators with the constants of its table `k` and store
 * the 8 channels in order: VQMOVNB / VQMOVNT interleave the two halves back into 8 int16 lanes,
 * saturating, and the zero point (saturating) and clamp follow on 8 lanes at once. Exact: a
 * value saturated at +-32767 stays beyond any int8 clamp bound after a zero point in
 * [-128, 127] is added. */
static ALWAYS_INLINE void store8(const int32_t *k, int32x4_t even, int32x4_t odd,
                                 int16_t out_offset, int8_t *out)
{
    const mb_mve_shifts se = {vldrwq_s32(k + 4 * LEFT_E), vldrwq_s32(k + 4 * NEG_RIGHT1_E)};
    const mb_mve_shifts so = {vldrwq_s32(k + 4 * LEFT_O), vldrwq_s32(k + 4 * NEG_RIGHT1_O)};
    const int32x4_t e = mb_mve_scale(even, vldrwq_s32(k + 4 * MULT_E), se);
    const int32x4_t o = mb_mve_scale(odd, vldrwq_s32(k + 4 * MULT_O), so);
    const int16x8_t v =
        vqaddq_n_s16(vqmovntq_s32(vqmovnbq_s32(vreinterpretq_s16_s32(e), e), o), out_offset);
    vstrbq_s16(out, vminq_s16(vmaxq_s16(v, vldrhq_s16((const int16_t *)(k + 4 * AMIN))),
                              vldrhq_s16((const int16_t *)(k + 4 * AMAX))));
}

/* 8 channels of one output pixel, 2 int32 accumulators (even and odd lanes) in registers, the
 * taps walked once: per tap 1 input and 1 filter load, VMULLB, VMULLT and 2 VADD (1 VADD more of
 * the offset at the border). Blocks of 16 channels would need 4 accumulators and 4 loaded
 * vectors plus the products: more than the 8 vector registers, GCC spills an accumulator on
 * every tap. The initial values are the table's vectors `init` (INIT_E: interior, BIAS_E:
 * border). kw is the filter width when a constant (3: the tap loop unrolled, 1: no tap loop),
 * else 0. */
static ALWAYS_INLINE void dw_block8(const dw_walk *w, const int8_t *x, const int8_t *f,
                                    const int32_t *k, const int init, int8_t *out,
                                    const int with_offset, const int kw)
{
    int32x4_t even = vldrwq_s32(k + 4 * init);
    int32x4_t odd = vldrwq_s32(k + 4 * (init + 1));
    const int16_t offset = (int16_t)w->offset;
    const int32_t nkx = kw ? kw : w->nkx;
    for (int32_t ky = 0; ky < w->nky; ky++, x += w->row, f += w->frow) {
        const int8_t *xt = x;
        const int8_t *ft = f;
#pragma GCC unroll 3 /* kw == 3: no loop left (at -O2 GCC keeps a counted loop of 3) */
        for (int32_t kx = 0; kx < nkx; kx++, xt += w->xstep, ft += w->fstep) {
            mac8(&even, &odd, xt, ft, offset, with_offset);
        }
    }
    store8(k, even, odd, (int16_t)w->out_offset, out);
}

/* One output pixel of `channels` channels: blocks of 8 channels (dw_block8), then one of 4
 * (int32 lanes), then the last 1-3 channels tail-predicated (VCTP32). */
static ALWAYS_INLINE void dw_pixel(const dw_walk *w, int32_t channels, const int8_t *x,
                                   const int8_t *f, const int32_t *tables, const int table_init,
                                   const int32_t *init, const int32_t *multipliers,
                                   const int32_t *shifts, int8_t *out, const int with_offset,
                                   const int kw)
{
    int32_t c = 0;
    for (; c + 8 <= channels; c += 8, tables += DW_TABLE_INT32) {
        dw_block8(w, x + c, f + c, tables, table_init, out + c, with_offset, kw);
    }
    if (c + 4 <= channels) {
        int32x4_t acc = vldrwq_s32(init + c);
        const int8_t *xr = x + c;
        const int8_t *fr = f + c;
        for (int32_t ky = 0; ky < w->nky; ky++, xr += w->row, fr += w->frow) {
            for (int32_t kx = 0; kx < w->nkx; kx++) {
                acc = mac4(acc, xr + kx * w->xstep, fr + kx * w->fstep, w->offset, with_offset);
            }
        }
        finish4(acc, multipliers + c, shifts + c, w, out + c);
        c += 4;
    }
    if (c < channels) {
        const mve_pred16_t pred = vctp32q((uint32_t)(channels - c));
        int32x4_t acc = vldrwq_z_s32(init + c, pred);
        const int8_t *xr = x + c;
        const int8_t *fr = f + c;
        for (int32_t ky = 0; ky < w->nky; ky++, xr += w->row, fr += w->frow) {
            for (int32_t kx = 0; kx < w->nkx; kx++) {
                int32x4_t xv = vldrbq_z_s32(xr + kx * w->xstep, pred);
                if (with_offset) {
                    xv = vaddq_n_s32(xv, w->offset);
                }
                const int32x4_t fv = vldrbq_z_s32(fr + kx * w->fstep, pred);
                acc = vaddq_s32(acc, vmulq_s32(xv, fv));
            }
        }
        const int32x4_t v = requantize4(acc, vldrwq_z_s32(multipliers + c, pred),
                                        vldrwq_z_s32(shifts + c, pred), w);
        vstrbq_p_s32(out + c, v, pred);
    }
}

/* `count` interior pixels of one block of 8 channels and a filter 3 taps wide (w->nky rows),
 * the first window at x, the next `pixel` input bytes further, outputs `out_step` bytes apart.
 * The filter's taps lie `fstep` bytes apart in order (row after row: a row is 3 taps), so one
 * pointer walks them all. Per pixel: 2 table loads, per tap 2 VLDRB.S16, VMULLB, VMULLT and
 * 2 VADD, then the requantization from 8 table loads. steps_constant: xstep and fstep are
 * constants of the copy (8-64 channels, no dilation). The empty asm statement hides that the table and the filter do
 * not change from pixel to pixel: GCC would otherwise hoist all their vectors out of the loop,
 * spill them and reload each with two instructions. */
static ALWAYS_INLINE void dw_run_block8_kw3(const dw_walk *w, const int32_t *table,
                                            const int8_t *x, int32_t pixel, int32_t count,
                                            const int8_t *f, int32_t xstep, int32_t fstep,
                                            int8_t *out, int32_t out_step,
                                            const int steps_constant)
{
    const int32_t row = w->row;
    const int32_t nky = w->nky;
    const int16_t out_offset = (int16_t)w->out_offset;
    for (int32_t i = 0; i < count; i++, x += pixel, out += out_step) {
        const int32_t *k = table;
        int32x4_t even, odd;
        if (steps_constant) {
            /* A row's taps addressed from its middle one: [p, #-step], [p], [p, #step] are
             * immediate offsets (7 bits) for every step up to 127, and the pointers move once
             * per row: 21 instructions per row of 3 taps. */
            const int8_t *xm = x + xstep;
            const int8_t *fm = f + fstep;
            __asm__("" : "+r"(k), "+r"(fm));
            even = vldrwq_s32(k + 4 * INIT_E);
            odd = vldrwq_s32(k + 4 * INIT_O);
            for (int32_t ky = 0; ky < nky; ky++, xm += row, fm += 3 * fstep) {
#pragma GCC unroll 3
                for (int32_t kx = -1; kx <= 1; kx++) {
                    mac8(&even, &odd, xm + kx * xstep, fm + kx * fstep, 0, 0);
                    /* The next tap's loads wait for this tap's sums: loaded all at once, the
                     * 6 vectors, 2 products and 2 sums overflow the 8 registers (a spill per
                     * row). */
                    __asm__("" : "+r"(xm), "+r"(fm) : "w"(even), "w"(odd));
                }
            }
        } else {
            /* Steps in registers (128 or more channels, dilation): the pointers step from tap
             * to tap, 26-28 per row as GCC allocates registers; addressed from the middle tap
             * as above, GCC adds register moves (29). */
            const int8_t *fr = f;
            __asm__("" : "+r"(k), "+r"(fr));
            even = vldrwq_s32(k + 4 * INIT_E);
            odd = vldrwq_s32(k + 4 * INIT_O);
            const int8_t *xr = x;
            for (int32_t ky = 0; ky < nky; ky++, xr += row) {
                const int8_t *xt = xr;
#pragma GCC unroll 3
                for (int32_t kx = 0; kx < 3; kx++, xt += xstep, fr += fstep) {
                    mac8(&even, &odd, xt, fr, 0, 0);
                    __asm__("" : "+r"(xt), "+r"(fr) : "w"(even), "w"(odd));
                }
            }
        }
        store8(k, even, odd, out_offset, out);
    }
}

/* `count` consecutive output pixels of one row whose windows lie wholly inside the input, the
 * first window at x, the next `pixel` input bytes further: no offset adds, no window arithmetic
 * per pixel. Each block of 8 channels walks all of them before the next block starts, its
 * constants read from its table; a filter 3 taps wide takes dw_run_block8_kw3, others dw_block8 per pixel. The last 1-7 channels then
 * walk the pixels together. Every channel still sees its output pixels in order, so an output
 * a whole number of pixels below the input (overlap_whole_pixels) is never read after it was
 * overwritten. */
static NOINLINE void dw_run_interior(const dw_walk *w, int32_t channels, const int8_t *x,
                                     int32_t pixel, int32_t count, const int8_t *f,
                                     const int32_t *tables, const int32_t *init,
                                     const int32_t *multipliers, const int32_t *shifts,
                                     int8_t *out)
{
    int32_t c = 0;
    for (; c + 8 <= channels; c += 8, tables += DW_TABLE_INT32) {
        if (w->nkx == 3) {
            /* Channel counts whose tap step fits a load's 7-bit immediate get a copy with the
             * steps constant: the taps of a row are immediate offsets from one pointer. */
            switch (w->xstep == channels ? channels : 0) {
            case 8: /* GCC does not fold +-8 into the loads (register moves): step per tap */
                dw_run_block8_kw3(w, tables, x, pixel, count, f, 8, 8, out, 8, 0);
                break;
            case 16:
                dw_run_block8_kw3(w, tables, x + c, pixel, count, f + c, 16, 16, out + c, 16, 1);
                break;
            case 32:
                dw_run_block8_kw3(w, tables, x + c, pixel, count, f + c, 32, 32, out + c, 32, 1);
                break;
            case 64:
                dw_run_block8_kw3(w, tables, x + c, pixel, count, f + c, 64, 64, out + c, 64, 1);
                break;
            default:
                dw_run_block8_kw3(w, tables, x + c, pixel, count, f + c, w->xstep, channels,
                                  out + c, channels, 0);
                break;
            }
        } else if (w->nkx == 1) { /* a time convolution's column: no loop over one tap */
            for (int32_t i = 0; i < count; i++) {
                dw_block8(w, x + c + i * pixel, f + c, tables, INIT_E, out + c + i * channels,
                          0, 1);
            }
        } else {
            for (int32_t i = 0; i < count; i++) {
                dw_block8(w, x + c + i * pixel, f + c, tables, INIT_E, out + c + i * channels,
                          0, 0);
            }
        }
    }
    if (c < channels) { /* fewer than 8 channels left: no table */
        for (int32_t i = 0; i < count; i++) {
            dw_pixel(w, channels - c, x + c + i * pixel, f + c, tables, INIT_E, init + c,
                     multipliers + c, shifts + c, out + c + i * channels, 0, 0);
        }
    }
}

/* A pixel at the border: only the taps inside, the input offset added to each input value.
 * Windows of 2 or 3 taps inside a row (a 3-wide filter's left and right edges, its top and
 * bottom rows) take copies with the tap loop of a block unrolled: the counted loop of a
 * variable width costs a test, set-up and a branch per row and block. Most border pixels are
 * such: ds_cnn's 3x3 layers on 25x5 have 56 border pixels, 46 of them 2 taps wide. */
static NOINLINE void dw_pixel_border(const dw_walk *w, int32_t channels, const int8_t *x,
                                     const int8_t *f, const int32_t *tables,
                                     const int32_t *init, const int32_t *multipliers,
                                     const int32_t *shifts, int8_t *out)
{
    if (w->nkx == 3) {
        dw_pixel(w, channels, x, f, tables, BIAS_E, init, multipliers, shifts, out, 1, 3);
    } else if (w->nkx == 2) {
        dw_pixel(w, channels, x, f, tables, BIAS_E, init, multipliers, shifts, out, 1, 2);
    } else {
        dw_pixel(w, channels, x, f, tables, BIAS_E, init, multipliers, shifts, out, 1, 0);
    }
}

/* The output columns [*lo, *hi) whose windows lie wholly inside the input (an empty range when
 * there are none). */
static void interior_columns(const mb_depthwise_conv2d_s8_params *p, int32_t *lo, int32_t *hi)
{
    const int32_t span = (p->filter_w - 1) * p->dilation_w + 1; /* input columns of a window */
    int32_t l = (p->pad_left + p->stride_w - 1) / p->stride_w;
    int32_t h = p->input_w >= span ? (p->input_w - span + p->pad_left) / p->stride_w + 1 : 0;
    h = h < p->output_w ? h : p->output_w;
    l = l < h ? l : h;
    *lo = l;
    *hi = h;
}

void mb_depthwise_conv2d_s8_mve(const mb_depthwise_conv2d_s8_params *p, const int8_t *input,
                                const int8_t *filter, const int32_t *bias,
                                const int32_t *interior_bias, const int32_t *multipliers,
                                const int32_t *shifts, int8_t *output, void *scratch)
{
    const int32_t channels = p->input_c;
    const int32_t row = p->input_w * channels;
    const int32_t frow = p->filter_w * channels;
    dw_walk w = {.row = row * p->dilation_h, .frow = frow,
                 .xstep = channels * p->dilation_w, .fstep = channels,
                 .offset = p->input_offset, .out_offset = p->output_offset,
                 .activation_min = p->activation_min, .activation_max = p->activation_max};
    int32_t ox_in_lo, ox_in_hi;
    interior_columns(p, &ox_in_lo, &ox_in_hi);
    int8_t *out = output;
    /* The block tables (see enum dw_table) follow the interior biases. */
    const int32_t *tables = interior_bias + ((channels + 3) & ~3);
    (void)scratch;

    /* One output column whose windows all lie inside the input (a time convolution over a
     * W = 1 or filter-wide input): the whole column is one interior run per batch, the next
     * window stride_h input rows on, so each block of 8 channels walks every output row with
     * its table loaded once, instead of a run of one pixel per row. */
    const int32_t span_h = (p->filter_h - 1) * p->dilation_h + 1;
    if (p->output_w == 1 && ox_in_lo == 0 && ox_in_hi == 1 && p->pad_top == 0 &&
        (p->output_h - 1) * p->stride_h + span_h <= p->input_h) {
        w.nky = p->filter_h;
        w.nkx = p->filter_w;
        for (int32_t b = 0; b < p->batches; b++) {
            dw_run_interior(&w, channels, input + b * p->input_h * row, p->stride_h * row,
                            p->output_h, filter, tables, interior_bias, multipliers, shifts,
                            output + b * p->output_h * channels);
        }
        return;
    }

    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * row;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            int32_t ky_lo, ky_hi;
            mb_dw_tap_range(in_y0, p->filter_h, p->dilation_h, p->input_h, &ky_lo, &ky_hi);
            /* Rows with every filter row inside run their interior columns in one call. */
            const int full_rows = ky_lo == 0 && ky_hi == p->filter_h;
            for (int32_t ox = 0; ox < p->output_w;) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                if (full_rows && ox == ox_in_lo && ox_in_hi > ox_in_lo) {
                    const int32_t count = ox_in_hi - ox_in_lo;
                    w.nky = p->filter_h;
                    w.nkx = p->filter_w;
                    dw_run_interior(&w, channels, in_batch + in_y0 * row + in_x0 * channels,
                                    p->stride_w * channels, count, filter, tables,
                                    interior_bias, multipliers, shifts, out);
                    ox += count;
                    out += count * channels;
                    continue;
                }
                int32_t kx_lo, kx_hi;
                mb_dw_tap_range(in_x0, p->filter_w, p->dilation_w, p->input_w, &kx_lo,
                                &kx_hi);
                const int8_t *x = in_batch; /* no tap inside: only the bias counts */
                const int8_t *f = filter;
                if (ky_hi > ky_lo && kx_hi > kx_lo) {
                    x += (in_y0 + ky_lo * p->dilation_h) * row +
                         (in_x0 + kx_lo * p->dilation_w) * channels;
                    f += ky_lo * frow + kx_lo * channels;
                }
                w.nky = ky_hi - ky_lo;
                w.nkx = kx_hi - kx_lo;
                dw_pixel_border(&w, channels, x, f, tables, bias, multipliers, shifts, out);
                ox++;
                out += channels;
            }
        }
    }
}

#else
typedef int mb_depthwise_conv2d_mve_unused;
#endif
