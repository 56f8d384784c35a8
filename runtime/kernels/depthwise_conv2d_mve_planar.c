/* DEPTHWISE_CONV_2D, Helium variant "mve_planar" (Cortex-M55): depth multiplier 1, a 3x3 filter,
 * stride 1 and no dilation along one spatial axis, at least 8 outputs along it.
 *
 * Why: the channels-innermost "mve" kernel (depthwise_conv2d_mve.c) has channels in its lanes,
 * so every tap needs a filter vector, it multiplies with VMULLB/VMULLT + VADD, and each block of
 * 8 channels of one pixel pays a whole requantization: ~1.7 instructions per multiply-accumulate
 * on ds_cnn's 3x3 layers, and its last 1-7 channels run 4 lanes a pixel. Here the lanes are
 * neighbouring output pixels of ONE channel: a tap's filter value is a scalar for all of them,
 * VMLA.S32 (vector times scalar plus vector, the one lane-wise integer multiply-accumulate MVE
 * has) does 4 multiply-accumulates, the requantization constants are the channel's scalars, and
 * the input bytes are read by contiguous VLDRB.S32 loads.
 *
 * Each channel is first gathered out of the HWC input into a "plane" in scratch (VLDRB.U16
 * gathers, 8 bytes each), its axis of stride 1 contiguous ("v", the vectors' axis: x, or y when
 * that is longer or x is strided), surrounded by the input zero point where windows reach into
 * the padding (the plane is filled with it once per call; channels overwrite only its inside). A
 * padding tap then adds filter * (zero point + input offset) = 0, so every output starts from
 * interior_bias (bias + input_offset * the channel's filter sum) and sums filter * raw byte: the
 * reference's sum in another order, exact in int32. The channel's left shift is folded into its
 * taps and bias (exact: the compiler checks |sum| * 2^left < 2^28, and right <= 28).
 *
 * Output blocks are 8 pixels along v (two accumulators of 4): 5 LDRD/LDR of the taps, 18
 * VLDRB.S32 and 18 VMLA.S32 (inline assembly, mac_3x3), then the channel's requantization,
 * VQMOVNB / VQMOVNT into 8 int16 lanes (pixels 0,4,1,5,2,6,3,7), zero point and clamp, and one
 * VSTRB.16 scatter store at channel c: ~69 instructions per 72 multiply-accumulates. With stride
 * 1 across rows too the outputs are walked as one sequence over the plane (channel_flat: no
 * partial block per row; a table built once per call holds each block's output offsets and the
 * predicate of its lanes that are outputs); otherwise row by row (channel_rows). Gathers and
 * scatters are one per 8 bytes in and one per 8 outputs, a small share, so the count stays close
 * to silicon's cycles.
 *
 * Measured on the M55 against "mve": ds_cnn's 25x5x64 layers 123k -> 106k instructions,
 * VWW's 48x48x8 273k -> 207k, 24x24x32 314k -> 216k, 12x12x64 133k -> 134k (even).
 *
 * The output may lie over the input, starting a whole number of pixels before it (the planner's
 * overlap, overlap_whole_pixels): a write of channel c then lands on channel c of the same or an
 * earlier input pixel, whose channel c was read already: it is in the current batch image (whose
 * channel c is in the plane) or in an earlier one (done). Batches go in order for that (walked
 * last to first, test_dw_planar's two-image model fails).
 *
 * Scratch: the flat walk's table, then the plane (depthwise_conv2d.py _planar_axes and
 * _planar_scratch mirror plane_of). */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <string.h>

#include "microbuild/kernels/depthwise_conv2d.h"
#include "microbuild/kernels/requantize_mve.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))

/* The convolution seen along the plane's axes: u (rows) and v (the vectors' axis, stride 1). */
typedef struct {
    int32_t rows, pitch;            /* the plane */
    int32_t in_u, in_v, pad_u, pad_v;
    int32_t in_step_u, in_step_v;   /* input bytes from one row / column to the next */
    int32_t out_u, out_v, out_step_u, out_step_v;
    int32_t ku, kv, f_step_u, f_step_v;
    int32_t stride_u, dil_u, dil_v;
    int32_t flat;                   /* the outputs walked as one sequence (see channel_flat) */
    int32_t blocks;                 /* flat: blocks of 8 outputs */
    int32_t period;                 /* flat: blocks after which the lanes' columns repeat */
    int32_t period_out;             /* flat: output bytes from one period to the next */
} plane_geometry;

/* v is x when x has stride 1 and is at least as long as y (or y is strided); else y. The
 * compiler's _planar_axes makes the same choice to size the scratch. */
static plane_geometry plane_of(const mb_depthwise_conv2d_s8_params *p)
{
    const int32_t c = p->input_c;
    const int along_x = p->stride_w == 1 && (p->output_w >= p->output_h || p->stride_h != 1);
    plane_geometry g;
    if (along_x) {
        g = (plane_geometry){.in_u = p->input_h, .in_v = p->input_w, .pad_u = p->pad_top,
                             .pad_v = p->pad_left, .in_step_u = p->input_w * c, .in_step_v = c,
                             .out_u = p->output_h, .out_v = p->output_w,
                             .out_step_u = p->output_w * c, .out_step_v = c,
                             .ku = p->filter_h, .kv = p->filter_w,
                             .f_step_u = p->filter_w * c, .f_step_v = c,
                             .stride_u = p->stride_h, .dil_u = p->dilation_h,
                             .dil_v = p->dilation_w};
    } else {
        g = (plane_geometry){.in_u = p->input_w, .in_v = p->input_h, .pad_u = p->pad_left,
                             .pad_v = p->pad_top, .in_step_u = c, .in_step_v = p->input_w * c,
                             .out_u = p->output_w, .out_v = p->output_h,
                             .out_step_u = c, .out_step_v = p->output_w * c,
                             .ku = p->filter_w, .kv = p->filter_h,
                             .f_step_u = c, .f_step_v = p->filter_w * c,
                             .stride_u = p->stride_w, .dil_u = p->dilation_w,
                             .dil_v = p->dilation_h};
    }
    g.rows = (g.out_u - 1) * g.stride_u + (g.ku - 1) * g.dil_u + 1;
    /* Flat: stride 1 across rows too and every output offset of an image in 16 bits. */
    g.flat = g.stride_u == 1 && p->output_h * p->output_w * c <= 0x10000;
    if (g.flat) {
        /* Row r of the outputs is the plane's row r (pitch: the outputs and the filter's
         * reach beyond them), so output (r, s) is number r * pitch + s of one sequence whose
         * windows are all the same bytes apart; the sequence's blocks of 8 read up to 7 bytes
         * past the last output's window (the plane's 8 bytes of slack). */
        g.pitch = g.out_v + (g.kv - 1) * g.dil_v;
        g.blocks = ((g.out_u - 1) * g.pitch + g.out_v + 7) / 8;
        /* Every pitch / gcd(pitch, 8) blocks the lanes are 8 / gcd rows further on, in the same
         * columns: the store table holds one period (VWW's 48-wide rows: 25 blocks, not 300). */
        int32_t gcd = 8;
        while (g.pitch % gcd != 0) {
            gcd /= 2;
        }
        g.period = g.pitch / gcd;
        g.period_out = (8 / gcd) * g.out_step_u;
    } else {
        /* Whole blocks of 8 outputs read up to 7 lanes past the row's last output. */
        g.pitch = ((g.out_v + 7) & ~7) + (g.kv - 1) * g.dil_v;
        g.blocks = g.period = g.period_out = 0;
    }
    return g;
}

typedef struct {
    int32_t rows, whole;         /* input rows copied; whole 8-byte chunks per row */
    int32_t tail;                /* bytes after them, 0-7 */
    mve_pred16_t tail_lanes;
    int32_t in_step_u, pitch, chunk;
    int32_t start;               /* the first copied byte's place in the plane */
    uint16x8_t offsets;          /* the 8 lanes' input bytes, in_step_v apart */
} plane_fill;

/* What fill_plane needs, worked out once per call rather than once per channel. Rows and
 * columns the outputs never read are left out. */
static plane_fill plane_fill_of(const plane_geometry *g)
{
    const int32_t cols = g->in_v < g->pitch - g->pad_v ? g->in_v : g->pitch - g->pad_v;
    const plane_fill f = {
        .rows = g->in_u < g->rows - g->pad_u ? g->in_u : g->rows - g->pad_u,
        .whole = cols / 8, .tail = cols % 8, .tail_lanes = vctp16q((uint32_t)(cols % 8)),
        .in_step_u = g->in_step_u, .pitch = g->pitch, .chunk = 8 * g->in_step_v,
        .start = g->pad_u * g->pitch + g->pad_v,
        .offsets = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)g->in_step_v),
    };
    return f;
}

/* Channel c of one batch image into the plane's inside: each input row a run of VLDRB.U16
 * gathers (8 bytes in_step_v apart; the compiler checks 7 * in_step_v fits 16 bits), whole
 * chunks unpredicated (GCC re-made the predicate of a VCTP loop every chunk), then the last
 * 1-7 bytes: no lane reads past the row or writes the padding after it. */
static NOINLINE void fill_plane(const plane_fill *f, const int8_t *image, int8_t *plane)
{
    /* f's fields in locals: the plane's stores may alias *f, and GCC re-read the loop bounds
     * and steps from it on every chunk (8 instructions per 8 bytes instead of 4) */
    const uint16x8_t offsets = f->offsets;
    const int32_t rows = f->rows, whole = f->whole, chunk = f->chunk;
    const int32_t in_step_u = f->in_step_u, pitch = f->pitch;
    const int32_t tail = f->tail;
    const mve_pred16_t tail_lanes = f->tail_lanes;
    int8_t *dst_row = plane + f->start;
    const uint8_t *src_row = (const uint8_t *)image;
    for (int32_t u = 0; u < rows; u++, src_row += in_step_u, dst_row += pitch) {
        const uint8_t *src = src_row;
        uint8_t *dst = (uint8_t *)dst_row;
        for (int32_t i = 0; i < whole; i++, src += chunk, dst += 8) {
            vstrbq_u16(dst, vldrbq_gather_offset_u16(src, offsets));
        }
        if (tail) {
            vstrbq_p_u16(dst, vldrbq_gather_offset_z_u16(src, offsets, tail_lanes), tail_lanes);
        }
    }
}

/* What one channel's blocks share. */
typedef struct {
    int32_t bias, multiplier, neg_right; /* bias and taps come shifted left (see the call) */
    int32_t shifted;                      /* a right shift (neg_right < 0): see scale */
    int16_t out_offset;
    int16x8_t amin, amax;
    uint16x8_t offsets8;      /* output bytes of the 8 lanes, pixels 0,4,1,5,2,6,3,7 */
    uint16x8_t positions8;    /* their pixel numbers, for the last block's predicate */
} channel_constants;

/* acc * multiplier * 2^shift rounded as mb_requantize_fast, the channel's scalars; acc already
 * holds the sum shifted left. SHIFTED: the channel has a right shift r >= 1, done as VRSHL by -r
 * (adds 2^(r-1), rounding half up) of high - 1 for a negative high, which makes it half away
 * from zero (requantize_mve.h mb_mve_requantize_any: the -1 never crosses a multiple of 2^r
 * other than at a tie); |high| < 2^28 here, so the -1 cannot wrap. Without a right shift the
 * result is the high word itself (one copy of each walk per case). */
static ALWAYS_INLINE int32x4_t scale(int32x4_t acc, const channel_constants *k, const int shifted)
{
    const int32x4_t hi = vqrdmulhq_n_s32(acc, k->multiplier);
    if (!shifted) {
        return hi;
    }
    return vrshlq_n_s32(vaddq_s32(hi, vshrq_n_s32(hi, 31)), k->neg_right);
}

static ALWAYS_INLINE int16x8_t requantize8(int32x4_t a, int32x4_t b, const channel_constants *k,
                                           const int shifted)
{
    int16x8_t v = vqmovntq_s32(vqmovnbq_s32(vreinterpretq_s16_s32(a), scale(a, k, shifted)),
                               scale(b, k, shifted));
    return vminq_s16(vmaxq_s16(vqaddq_n_s16(v, k->out_offset), k->amin), k->amax);
}

static ALWAYS_INLINE void store_block(int32x4_t a, int32x4_t b, const channel_constants *k,
                                      int8_t *out, int32_t count, const int whole)
{
    const int16x8_t v = k->shifted ? requantize8(a, b, k, 1) : requantize8(a, b, k, 0);
    if (whole) {
        vstrbq_scatter_offset_s16(out, k->offsets8, v);
    } else {
        vstrbq_scatter_offset_p_s16(out, k->offsets8, v,
                                    vcmphiq_u16(vdupq_n_u16((uint16_t)count), k->positions8));
    }
}

/* The last block of a row: `count` (1-8) of its pixels stored. */
static NOINLINE void store_last(int32x4_t a, int32x4_t b, const channel_constants *k,
                                int8_t *out, int32_t count)
{
    store_block(a, b, k, out, count, 0);
}

/* One row of a 3x3 window on 8 pixels: taps t0, t1 times bytes 0, 1 of row pointer r into a
 * (bytes 4, 5 into b), the first load post-indexed by 8 (the next block's start), the others
 * at offsets from there; TAP1 the row's third tap (bytes 2 and 6). */
#define TAP2(r, t0, t1)                                    \
    "vldrb.s32 %q[x0], [%[" r "]], #8\n\t"                  \
    "vmla.s32 %q[a], %q[x0], %[" t0 "]\n\t"                 \
    "vldrb.s32 %q[x1], [%[" r "], #-4]\n\t"                 \
    "vmla.s32 %q[b], %q[x1], %[" t0 "]\n\t"                 \
    "vldrb.s32 %q[x0], [%[" r "], #-7]\n\t"                 \
    "vmla.s32 %q[a], %q[x0], %[" t1 "]\n\t"                 \
    "vldrb.s32 %q[x1], [%[" r "], #-3]\n\t"                 \
    "vmla.s32 %q[b], %q[x1], %[" t1 "]\n\t"

#define TAP1(r, t2)                                        \
    "vldrb.s32 %q[x0], [%[" r "], #-6]\n\t"                 \
    "vmla.s32 %q[a], %q[x0], %[" t2 "]\n\t"                 \
    "vldrb.s32 %q[x1], [%[" r "], #-2]\n\t"                 \
    "vmla.s32 %q[b], %q[x1], %[" t2 "]\n\t"

/* a, b (pixels 0-3, 4-7) += the 3x3 window of 8 pixels: rows at *r0, *r1, *r2 (each moved on
 * by 8), taps[0..8] read with LDRD / LDR into two registers. 6 LDR(D), 18 VLDRB.S32 and 18
 * VMLA.S32: in C, GCC hoisted the 18 loads above the multiplies and spilled them, and added
 * each offset to a pointer register instead of using the load's immediate. Two tap registers,
 * not four: with four, the flat walk's loop ran out of registers and spilled two values per
 * block. Reads the plane and the taps, which nothing writes while a channel's rows run (so no
 * "memory" clobber: the channel's constants stay in registers across blocks). The row pointers
 * are low registers ("l"): the widening VLDRB encodings have a 3-bit base register field. */
static ALWAYS_INLINE void mac_3x3(int32x4_t *a, int32x4_t *b, const int8_t **r0,
                                  const int8_t **r1, const int8_t **r2, const int32_t *taps)
{
    int32x4_t x0, x1;
    int32_t t0, t1;
    __asm__("ldrd %[t0], %[t1], [%[taps]]\n\t"
            TAP2("r0", "t0", "t1")
            "ldr %[t0], [%[taps], #8]\n\t"
            TAP1("r0", "t0")
            "ldrd %[t0], %[t1], [%[taps], #12]\n\t"
            TAP2("r1", "t0", "t1")
            "ldr %[t0], [%[taps], #20]\n\t"
            TAP1("r1", "t0")
            "ldrd %[t0], %[t1], [%[taps], #24]\n\t"
            TAP2("r2", "t0", "t1")
            "ldr %[t0], [%[taps], #32]\n\t"
            TAP1("r2", "t0")
            : [a] "+w"(*a), [b] "+w"(*b), [r0] "+l"(*r0), [r1] "+l"(*r1), [r2] "+l"(*r2),
              [x0] "=&w"(x0), [x1] "=&w"(x1), [t0] "=&r"(t0), [t1] "=&r"(t1)
            : [taps] "r"(taps));
}

/* One output row of a 3x3 filter without dilation along v (mac_3x3 per block of 8 pixels). */
static ALWAYS_INLINE void row_blocks_3x3(const plane_geometry *g, const int8_t *r0,
                                         const int8_t *r1, const int8_t *r2,
                                         const int32_t *taps, const channel_constants *k,
                                         int8_t *out)
{
    const int32_t out_block = 8 * g->out_step_v;
    const int32x4_t init = vdupq_n_s32(k->bias);
    int32_t left = g->out_v;
    for (; left >= 8; left -= 8, out += out_block) {
        int32x4_t a = init;
        int32x4_t b = init;
        mac_3x3(&a, &b, &r0, &r1, &r2, taps);
        store_block(a, b, k, out, 8, 1);
    }
    if (left > 0) {
        int32x4_t a = init;
        int32x4_t b = init;
        mac_3x3(&a, &b, &r0, &r1, &r2, taps);
        store_last(a, b, k, out, left);
    }
}

/* The plane's channel through the 3x3 filter, row by row (a stride across rows, or an image
 * too large for 16-bit offsets): blocks of 8 along v, the last one of a row partial. */
static NOINLINE void channel_rows(const plane_geometry *g, const int8_t *plane,
                                  const int32_t *taps, const channel_constants *k, int8_t *out)
{
    const int32_t row_step = g->stride_u * g->pitch;
    const int32_t d = g->dil_u * g->pitch;
    for (int32_t r = 0; r < g->out_u; r++, out += g->out_step_u, plane += row_step) {
        row_blocks_3x3(g, plane, plane + d, plane + 2 * d, taps, k, out);
    }
}

/* The flat walk's store table, the same for every channel (built once per call): for the
 * blocks of one period (table_blocks), the output offsets of its lanes (pixels 0,4,1,5,2,6,3,7
 * of the block, the order requantize8 leaves them in) and the predicate of the lanes that are
 * outputs (not one of the (kv - 1) * dil_v numbers past a row's last output). Walked with
 * vectors: s, r of each lane step by 8 along the sequence and wrap at the pitch. */
static int32_t table_blocks(const plane_geometry *g)
{
    return g->blocks < g->period ? g->blocks : g->period;
}

static NOINLINE void flat_table(const plane_geometry *g, uint16_t *offsets, mve_pred16_t *preds)
{
    const uint16x8_t positions = {0, 4, 1, 5, 2, 6, 3, 7};
    uint16x8_t s = positions; /* the lanes' column in the plane */
    uint16x8_t r = vdupq_n_u16(0);
    for (int32_t i = 0; i < table_blocks(g); i++, offsets += 8) {
        const mve_pred16_t wrap = vcmpcsq_n_u16(s, (uint16_t)g->pitch); /* s >= pitch */
        s = vsubq_m_n_u16(s, s, (uint16_t)g->pitch, wrap);
        r = vaddq_m_n_u16(r, r, 1, wrap);
        vst1q_u16(offsets, vmlaq_n_u16(vmulq_n_u16(r, (uint16_t)g->out_step_u), s,
                                       (uint16_t)g->out_step_v));
        preds[i] = vcmphiq_u16(vdupq_n_u16((uint16_t)g->out_v), s);
        s = vaddq_n_u16(s, 8);
    }
}

/* One block of the flat walk: 8 outputs from the rows' pointers, stored at out + offsets under
 * pred. */
static ALWAYS_INLINE void flat_block(const int8_t **r0, const int8_t **r1, const int8_t **r2,
                                     const int32_t *taps, const channel_constants *k,
                                     int32x4_t init, int8_t *out, const uint16_t *offsets,
                                     mve_pred16_t pred, const int shifted)
{
    int32x4_t a = init;
    int32x4_t b = init;
    mac_3x3(&a, &b, r0, r1, r2, taps);
    vstrbq_scatter_offset_p_s16(out, vld1q_u16(offsets), requantize8(a, b, k, shifted), pred);
}

/* The plane's channel through the 3x3 filter as one sequence (stride 1 across rows): output
 * (r, s) is number r * pitch + s, its window at the same byte of the plane, so blocks of 8 run
 * over the rows' ends without a partial block per row; the lanes between rows are computed and
 * not stored (the table's predicates). ds_cnn's 5 rows of 25: 17 blocks instead of 5 x 4. The
 * table covers one period; each period's outputs are period_out bytes on. The last block also
 * leaves out its lanes past the last output. */
static ALWAYS_INLINE void flat_walk(const plane_geometry *g, const int8_t *plane,
                                     const int32_t *taps, const channel_constants *k,
                                     int8_t *out, const uint16_t *offsets,
                                     const mve_pred16_t *preds, const int shifted)
{
    const int32_t d = g->dil_u * g->pitch;
    const int8_t *r0 = plane;
    const int8_t *r1 = plane + d;
    const int32_t *t = taps;
    const int8_t *r2 = plane + 2 * d;
    const int32x4_t init = vdupq_n_s32(k->bias);
    /* Locals: the scatter store may alias *g and *k as far as GCC knows, which then reloads
     * them every block. */
    const channel_constants kk = *k;
    const int32_t period = table_blocks(g);
    const int32_t period_out = g->period_out;
    int8_t *base = out;
    for (int32_t left = g->blocks - 1; left > 0; base += period_out) {
        const int32_t n = left < period ? left : period;
        for (int32_t i = 0; i < n; i++) {
            flat_block(&r0, &r1, &r2, t, &kk, init, base, offsets + 8 * i, preds[i], shifted);
        }
        left -= n;
    }
    const int32_t last = g->blocks - 1;
    const uint16x8_t positions = {0, 4, 1, 5, 2, 6, 3, 7};
    const int32_t lanes = (g->out_u - 1) * g->pitch + g->out_v - 8 * last; /* 1-8 */
    const int32_t i = last % period;
    flat_block(&r0, &r1, &r2, t, &kk, init, out + (last / period) * period_out, offsets + 8 * i,
               preds[i] & vcmphiq_u16(vdupq_n_u16((uint16_t)lanes), positions), shifted);
}

/* flat_walk with and without a right shift, each its own copy. */
static NOINLINE void channel_flat(const plane_geometry *g, const int8_t *plane,
                                  const int32_t *taps, const channel_constants *k, int8_t *out,
                                  const uint16_t *offsets, const mve_pred16_t *preds)
{
    if (k->shifted) {
        flat_walk(g, plane, taps, k, out, offsets, preds, 1);
    } else {
        flat_walk(g, plane, taps, k, out, offsets, preds, 0);
    }
}

void mb_depthwise_conv2d_s8_mve_planar(const mb_depthwise_conv2d_s8_params *p,
                                       const int8_t *input, const int8_t *filter,
                                       const int32_t *bias, const int32_t *interior_bias,
                                       const int32_t *multipliers, const int32_t *shifts,
                                       int8_t *output, void *scratch)
{
    (void)bias; /* every pixel starts from interior_bias: the padding holds the zero point */
    const plane_geometry g = plane_of(p);
    /* Scratch: the flat walk's table (16 bytes of offsets and a predicate per block of a
     * period), then the plane with 8 bytes of slack (_planar_scratch). */
    uint16_t *offsets = (uint16_t *)scratch;
    mve_pred16_t *preds = (mve_pred16_t *)(offsets + 8 * table_blocks(&g));
    int8_t *plane = (int8_t *)scratch + ((18 * table_blocks(&g) + 3) & ~3);
    const int32_t channels = p->input_c;
    const int32_t in_image = p->input_h * p->input_w * channels;
    const int32_t out_image = p->output_h * p->output_w * channels;
    const uint16x8_t positions = {0, 4, 1, 5, 2, 6, 3, 7};
    channel_constants k = {
        .out_offset = (int16_t)p->output_offset,
        .amin = vdupq_n_s16((int16_t)p->activation_min),
        .amax = vdupq_n_s16((int16_t)p->activation_max),
        .offsets8 = vmulq_n_u16(positions, (uint16_t)g.out_step_v),
        .positions8 = positions,
    };
    int32_t taps[9];
    int32_t tap_at[9]; /* tap i*3+j's byte in the filter, from channel 0 */
    for (int32_t t = 0; t < 9; t++) {
        tap_at[t] = (t / 3) * g.f_step_u + (t % 3) * g.f_step_v;
    }
    const plane_fill fill = plane_fill_of(&g);
    memset(plane, -p->input_offset, (size_t)(g.rows * g.pitch + 8));
    if (g.flat) {
        flat_table(&g, offsets, preds);
    }
    for (int32_t b = 0; b < p->batches; b++) { /* in order: see the overlap above */
        for (int32_t c = 0; c < channels; c++) {
            fill_plane(&fill, input + b * in_image + c, plane);
            /* The left shift goes into the taps and the bias: the sum comes out shifted, exact
             * (the compiler checks |sum| * 2^left < 2^28), with no VSHL per block. */
            const int32_t left = shifts[c] > 0 ? shifts[c] : 0;
            const int8_t *f = filter + c;
#pragma GCC unroll 9
            for (int32_t t = 0; t < 9; t++) {
                taps[t] = (int32_t)f[tap_at[t]] * ((int32_t)1 << left);
            }
            k.bias = interior_bias[c] * ((int32_t)1 << left);
            k.multiplier = multipliers[c];
            k.neg_right = shifts[c] < 0 ? shifts[c] : 0;
            k.shifted = shifts[c] < 0;
            int8_t *out = output + b * out_image + c;
            if (g.flat) {
                channel_flat(&g, plane, taps, &k, out, offsets, preds);
            } else {
                channel_rows(&g, plane, taps, &k, out);
            }
        }
    }
}

#else
typedef int mb_depthwise_conv2d_mve_planar_unused;
#endif
