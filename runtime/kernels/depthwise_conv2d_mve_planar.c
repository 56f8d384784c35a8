/* DEPTHWISE_CONV_2D, Helium variant "mve_planar" (Cortex-M55): depth multiplier 1, a 3x3 filter,
 * stride 1 and no dilation along one spatial axis; taken for channel counts that are not a
 * multiple of 8 (depthwise_conv2d.py _planar_fits).
 *
 * Why: the channels-innermost "mve" kernel (depthwise_conv2d_mve.c) works on blocks of 8
 * channels; the last 1-7 run on 4-lane blocks a pixel at a time, each paying its whole
 * requantization (dw_3x3_same_s1_relu6_clamped_c6: 0.90x TFLM + CMSIS-NN). Here the lanes are
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
 * reference's sum in another order, exact in int32.
 *
 * Output blocks are 8 pixels along v (two accumulators of 4): 5 LDRD/LDR of the taps, 18
 * VLDRB.S32 and 18 VMLA.S32 (inline assembly, mac_3x3), then the channel's requantization,
 * VQMOVNB / VQMOVNT into 8 int16 lanes (pixels 0,4,1,5,2,6,3,7), zero point and clamp, and one
 * VSTRB.16 scatter store at channel c (offsets in that lane order); ~75 instructions per 72
 * multiply-accumulates. The last block of a row stores only its pixels inside the row (lanes
 * past it read plane bytes the pitch reserves). Gathers and scatters are one per 8 bytes in and
 * one per 8 outputs, a small share, so the count stays close to silicon's cycles.
 *
 * Measured against "mve" on the M55 it loses where the channels fill its 8-channel blocks
 * (ds_cnn's 64: 123k -> 150k instructions a layer, the per-channel plane and the short rows'
 * last blocks), hence the channel rule.
 *
 * The output never lies over the input (the variant declares no overlap_group): shifted down
 * by whole pixels, batch b's channel c would land on batch b + 1's before its plane is read.
 *
 * Scratch: the plane, rows x pitch bytes (depthwise_conv2d.py _planar_axes mirrors plane_of).
 * Requantization: the compiler checks |acc| * 2^left < 2^28 and right <= 28, as for "mve". */
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
    /* Whole blocks of 8 outputs read up to 7 lanes past the row's last output. */
    g.pitch = ((g.out_v + 7) & ~7) + (g.kv - 1) * g.dil_v;
    return g;
}

/* Channel c of one batch image into the plane's inside: each input row a run of VLDRB.U16
 * gathers (8 bytes in_step_v apart; the compiler checks 7 * in_step_v fits 16 bits), the last
 * one tail-predicated. Rows and columns the outputs never read are left out. */
static NOINLINE void fill_plane(const plane_geometry *g, const int8_t *image, int8_t *plane)
{
    const int32_t rows = g->in_u < g->rows - g->pad_u ? g->in_u : g->rows - g->pad_u;
    const int32_t cols = g->in_v < g->pitch - g->pad_v ? g->in_v : g->pitch - g->pad_v;
    const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)g->in_step_v);
    const int32_t block = 8 * g->in_step_v;
    int8_t *dst_row = plane + g->pad_u * g->pitch + g->pad_v;
    const uint8_t *src_row = (const uint8_t *)image;
    for (int32_t u = 0; u < rows; u++, src_row += g->in_step_u, dst_row += g->pitch) {
        const uint8_t *src = src_row;
        uint8_t *dst = (uint8_t *)dst_row;
        for (int32_t left = cols; left > 0; left -= 8, src += block, dst += 8) {
            const mve_pred16_t pred = vctp16q((uint32_t)left);
            vstrbq_p_u16(dst, vldrbq_gather_offset_z_u16(src, offsets, pred), pred);
        }
    }
}

/* What one channel's blocks share. */
typedef struct {
    int32_t bias, multiplier, left, neg_right1;
    int16_t out_offset;
    int16x8_t amin, amax;
    uint16x8_t offsets8;      /* output bytes of the 8 lanes, pixels 0,4,1,5,2,6,3,7 */
    uint16x8_t positions8;    /* their pixel numbers, for the last block's predicate */
} channel_constants;

/* acc * multiplier * 2^shift rounded as mb_requantize_fast (requantize_mve.h mb_mve_scale, the
 * channel's scalars). */
static ALWAYS_INLINE int32x4_t scale(int32x4_t acc, const channel_constants *k)
{
    const int32x4_t hi = vqrdmulhq_n_s32(vshlq_r_s32(acc, k->left), k->multiplier);
    const int32x4_t t = vaddq_s32(vaddq_s32(hi, hi), vshrq_n_s32(hi, 31));
    return vrshlq_n_s32(t, k->neg_right1);
}

/* Pixels 0-3 (a) and 4-7 (b) requantized, narrowed with saturation into 8 int16 lanes (exact:
 * a saturated value stays beyond any int8 bound after the zero point), offset, clamped and
 * stored at out by one scatter; `count` of the 8 are stored. */
static ALWAYS_INLINE void store_block(int32x4_t a, int32x4_t b, const channel_constants *k,
                                      int8_t *out, int32_t count, const int whole)
{
    int16x8_t v = vqmovntq_s32(vqmovnbq_s32(vreinterpretq_s16_s32(a), scale(a, k)), scale(b, k));
    v = vminq_s16(vmaxq_s16(vqaddq_n_s16(v, k->out_offset), k->amin), k->amax);
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

/* One row of a 3x3 window on 8 pixels: taps t0-t2 times bytes 0-2 of row pointer r into a
 * (bytes 4-6 into b), the first load post-indexed by 8 (the next block's start), the others at
 * offsets from there. */
#define ROW3(r, t0, t1, t2)                               \
    "vldrb.s32 %q[x0], [%[" r "]], #8\n\t"                 \
    "vmla.s32 %q[a], %q[x0], %[" t0 "]\n\t"                 \
    "vldrb.s32 %q[x1], [%[" r "], #-4]\n\t"                \
    "vmla.s32 %q[b], %q[x1], %[" t0 "]\n\t"                 \
    "vldrb.s32 %q[x0], [%[" r "], #-7]\n\t"                \
    "vmla.s32 %q[a], %q[x0], %[" t1 "]\n\t"                 \
    "vldrb.s32 %q[x1], [%[" r "], #-3]\n\t"                \
    "vmla.s32 %q[b], %q[x1], %[" t1 "]\n\t"                 \
    "vldrb.s32 %q[x0], [%[" r "], #-6]\n\t"                \
    "vmla.s32 %q[a], %q[x0], %[" t2 "]\n\t"                 \
    "vldrb.s32 %q[x1], [%[" r "], #-2]\n\t"                \
    "vmla.s32 %q[b], %q[x1], %[" t2 "]\n\t"

/* a, b (pixels 0-3, 4-7) += the 3x3 window of 8 pixels: rows at *r0, *r1, *r2 (each moved on
 * by 8), taps[0..8] read two at a time with LDRD. 5 LDR(D), 18 VLDRB.S32 and 18 VMLA.S32: in
 * C, GCC hoisted the 18 loads above the multiplies and spilled them, and added each offset to
 * a pointer register instead of using the load's immediate. Reads the plane and the taps,
 * which nothing writes while a channel's rows run (so no "memory" clobber: the channel's
 * constants stay in registers across blocks). The row pointers are low registers ("l"): the
 * widening VLDRB encodings have a 3-bit base register field. */
static ALWAYS_INLINE void mac_3x3(int32x4_t *a, int32x4_t *b, const int8_t **r0,
                                  const int8_t **r1, const int8_t **r2, const int32_t *taps)
{
    int32x4_t x0, x1;
    int32_t t0, t1, t2, t3;
    __asm__("ldrd %[t0], %[t1], [%[taps]]\n\t"
            "ldrd %[t2], %[t3], [%[taps], #8]\n\t"
            ROW3("r0", "t0", "t1", "t2")
            "ldrd %[t0], %[t1], [%[taps], #16]\n\t"
            ROW3("r1", "t3", "t0", "t1")
            "ldrd %[t2], %[t3], [%[taps], #24]\n\t"
            "ldr %[t0], [%[taps], #32]\n\t"
            ROW3("r2", "t2", "t3", "t0")
            : [a] "+w"(*a), [b] "+w"(*b), [r0] "+l"(*r0), [r1] "+l"(*r1), [r2] "+l"(*r2),
              [x0] "=&w"(x0), [x1] "=&w"(x1), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2),
              [t3] "=&r"(t3)
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

/* The plane's channel through the 3x3 filter: every output row, blocks of 8 along v. */
static NOINLINE void channel_rows(const plane_geometry *g, const int8_t *plane,
                                  const int32_t *taps, const channel_constants *k, int8_t *out)
{
    const int32_t row_step = g->stride_u * g->pitch;
    const int32_t d = g->dil_u * g->pitch;
    for (int32_t r = 0; r < g->out_u; r++, out += g->out_step_u, plane += row_step) {
        row_blocks_3x3(g, plane, plane + d, plane + 2 * d, taps, k, out);
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
    int8_t *plane = (int8_t *)scratch;
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
    memset(plane, -p->input_offset, (size_t)(g.rows * g.pitch));
    for (int32_t b = 0; b < p->batches; b++) {
        for (int32_t c = 0; c < channels; c++) {
            fill_plane(&g, input + b * in_image + c, plane);
            for (int32_t i = 0; i < g.ku; i++) {
                for (int32_t j = 0; j < g.kv; j++) {
                    taps[i * g.kv + j] = filter[i * g.f_step_u + j * g.f_step_v + c];
                }
            }
            k.bias = interior_bias[c];
            k.multiplier = multipliers[c];
            k.left = shifts[c] > 0 ? shifts[c] : 0;
            k.neg_right1 = (shifts[c] < 0 ? shifts[c] : 0) - 1;
            channel_rows(&g, plane, taps, &k, output + b * out_image + c);
        }
    }
}

#else
typedef int mb_depthwise_conv2d_mve_planar_unused;
#endif
