/* CONV_2D variant "mve" (Helium, Cortex-M55/M85): the reference's arithmetic with VMLADAVA.S8,
 * 16 int8 multiply-accumulates into a 32-bit scalar per instruction, on the int8 data directly.
 *
 * Like conv2d_gemm.c, each output pixel's window becomes a column (im2col) whose padding taps hold
 * the input zero point (they then add filter * (zero_point + input_offset) = 0, as the reference's
 * skipping does), padded with zeros to kp, a multiple of 16 taps; every pixel is then
 * sum(filter * column) + interior_bias. A 1x1 filter needs no copy: the column is the input
 * pixel itself, its last depth % 16 taps read with tail predication.
 *
 * Blocks of 4 pixels x 4 output channels (direct_block): 3 pixels x 2 channels twice and the 4th
 * pixel x 4 channels (sums_3x2, sums_1x4), 34 instructions per 16 taps of the block's 256
 * multiply-accumulates. A 1x1 filter without
 * padding reads its 4 pixels in place (run_direct); any other builds their 4 columns in scratch
 * first (run_columns). The filter is arranged at compile time (microbuild/compiler/ops/conv2d.py,
 * _arrange_mve): rows padded with zeros to kp taps and to a multiple of 4 channels, then per
 * block of 4 channels chunk by chunk, the 4 rows' 16 taps one after the other. The 4 channels of
 * a pixel are requantized together on 4 lanes (requantize_mve.h; the compiler checks its
 * bounds), the last block tail-predicated; a block's interior biases, multipliers and split
 * shifts are one table of 4 vectors after the interior biases (conv2d.py with_mve_tables),
 * also with a fused ADD (whose conv values go whole blocks to scratch). A fused residual ADD
 * runs after each block of pixels
 * on its requantized values (residual_add, the ADD variant's arithmetic in add_mve.h). Blocks
 * walk 4 pixels at once, hence the variant's overlap_group of 4 (conv2d.py). Scratch: the 4
 * pixels' int8 columns (none when read in place), then with a fused ADD their conv values. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/asm_function.h"
#include "microbuild/kernels/conv2d_column.h"
#include "microbuild/kernels/add_mve.h"
#include "microbuild/kernels/requantize_mve.h"

#define CB 4 /* output channels per block */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* What run_columns' window copies share, fixed per convolution. */
typedef struct {
    const mb_conv2d_s8_params *p;
    int32_t kp;
    int32_t plain;             /* no dilation and the filter fits the input: a window inside */
    int32_t last_iy, last_ix;  /* the input is filter_h runs of `row` bytes from its origin, */
    int32_t row, pitch;        /* which is at most (last_iy, last_ix); pitch: an input row */
    mve_pred16_t in_row;       /* the first `row` lanes (a row of at most 16 bytes) */
    mve_pred16_t zeros;        /* the lanes from the last tap up to kp */
    int32_t image_bytes;
    int32_t dilated_taps;      /* dilated, at most 16 channels a tap: dilated_column, whose */
    int32_t dilated_inside;    /* window lies inside from origins up to (last_dy, last_dx) */
    uint32_t last_dy, last_dx;
    int32_t gather;            /* dilated rows of at most 32 bytes: gather_column, with per */
    uint8x16_t offsets[2];     /* half row each lane's byte in the input from the row's first */
    uint8x16_t lane_dx[2];     /* tap and its tap's input column from the first tap's (255 past */
    mve_pred16_t high_row;     /* the row); high_row: the lanes of the row's second half */
    int32_t span_w;            /* (filter_w - 1) * dilation_w */
    int32_t undilated;         /* undilated: edge_rows_column for windows in the padding */
} window_copy;

static window_copy window_copy_of(const mb_conv2d_s8_params *p, int32_t kp)
{
    window_copy w;
    w.p = p;
    w.kp = kp;
    w.last_iy = p->input_h - p->filter_h;
    w.last_ix = p->input_w - p->filter_w;
    w.plain = p->dilation_h == 1 && p->dilation_w == 1 && w.last_iy >= 0 && w.last_ix >= 0;
    w.row = p->filter_w * p->input_c;
    w.pitch = p->input_w * p->input_c;
    w.in_row = vctp8q((uint32_t)w.row);
    w.zeros = vctp8q((uint32_t)(kp - p->filter_h * w.row));
    w.image_bytes = p->input_h * w.pitch;
    w.dilated_taps = (p->dilation_h != 1 || p->dilation_w != 1) && p->input_c <= 16;
    const int32_t last_dy = p->input_h - (p->filter_h - 1) * p->dilation_h - 1;
    const int32_t last_dx = p->input_w - (p->filter_w - 1) * p->dilation_w - 1;
    w.dilated_inside = last_dy >= 0 && last_dx >= 0; /* else wider than the input */
    w.last_dy = (uint32_t)last_dy;
    w.last_dx = (uint32_t)last_dx;
    const int32_t c = p->input_c, span = (p->filter_w - 1) * p->dilation_w;
    w.gather = w.dilated_taps && w.row <= 32 && span * c + c <= 256 && span <= 254;
    w.high_row = vctp8q((uint32_t)(w.row > 16 ? w.row - 16 : 0));
    w.undilated = p->dilation_h == 1 && p->dilation_w == 1;
    if (w.gather) { /* once per convolution; the lanes past the row as gather_column needs */
        uint8_t offsets[32] = {0}, lane_dx[32];
        memset(lane_dx, 255, sizeof lane_dx);
        for (int32_t l = 0, kx = 0, ci = 0; l < w.row; l++) {
            offsets[l] = (uint8_t)(kx * p->dilation_w * c + ci);
            lane_dx[l] = (uint8_t)(kx * p->dilation_w);
            if (++ci == c) {
                ci = 0;
                kx++;
            }
        }
        for (int32_t h = 0; h < 2; h++) {
            w.offsets[h] = vldrbq_u8(offsets + 16 * h);
            w.lane_dx[h] = vldrbq_u8(lane_dx + 16 * h);
        }
    } else {
        w.offsets[0] = w.offsets[1] = w.lane_dx[0] = w.lane_dx[1] = vdupq_n_u8(0);
    }
    w.span_w = span;
    return w;
}

/* A window that reaches into the padding (or is dilated): the shared builder, out of line so
 * that the interior copy inlined in run_columns keeps its registers. */
static __attribute__((noinline)) void edge_column(const mb_conv2d_s8_params *p,
                                                  const int8_t *image, int32_t oy, int32_t ox,
                                                  int32_t kp, int8_t *col)
{
    mb_conv2d_column_s8(p, image, oy, ox, kp, col);
}

/* A dilated window whose taps have at most 16 input channels (conv_3x3_dil2's 3 to 8): each tap
 * is one predicated VLDRB/VSTRB of its input_c bytes, or a predicated VSTRB of the zero point
 * when it lies in the padding (the unsigned compare catches both sides), then the zeros up to kp.
 * mb_conv2d_dilated_column_s8 would call memcpy or memset per tap. */
static __attribute__((noinline)) void dilated_column(const window_copy *w, const int8_t *image,
                                                     int32_t oy, int32_t ox, int8_t *col)
{
    /* Everything the loops read, in locals: the int8 stores may alias *w and *p, so GCC
     * reloaded each field per tap (19 instructions a tap instead of 6). */
    const mb_conv2d_s8_params *p = w->p;
    const int32_t c = p->input_c, pitch = w->pitch;
    const int32_t fh = p->filter_h, fw = p->filter_w;
    const int32_t dh = p->dilation_h, dw = p->dilation_w;
    const uint32_t in_h = (uint32_t)p->input_h, in_w = (uint32_t)p->input_w;
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    const mve_pred16_t tap = vctp8q((uint32_t)c);
    const mve_pred16_t zeros = w->zeros;
    const int32_t tap_step = dw * c;
    int8_t *dst = col;
    const int8_t *src = image + iy0 * pitch + ix0 * c;
    if (w->dilated_inside && (uint32_t)iy0 <= w->last_dy && (uint32_t)ix0 <= w->last_dx) {
        for (int32_t ky = 0; ky < fh; ky++, src += dh * pitch) {
            const int8_t *s = src;
            for (int32_t kx = 0; kx < fw; kx++, dst += c, s += tap_step) {
                vstrbq_p_s8(dst, vldrbq_z_s8(s, tap), tap);
            }
        }
    } else {
        const int8x16_t zero_point = vdupq_n_s8((int8_t)(-p->input_offset));
        for (int32_t ky = 0; ky < fh; ky++, src += dh * pitch) {
            const uint32_t iy = (uint32_t)(iy0 + ky * dh);
            const int8_t *s = src;
            int32_t ix = ix0;
            for (int32_t kx = 0; kx < fw; kx++, dst += c, s += tap_step, ix += dw) {
                const int8x16_t v = iy < in_h && (uint32_t)ix < in_w ? vldrbq_z_s8(s, tap)
                                                                     : zero_point;
                vstrbq_p_s8(dst, v, tap);
            }
        }
    }
    vstrbq_p_s8(dst, vdupq_n_s8(0), zeros);
}

/* The lanes of one half of a row (lane_dx: their taps' columns from the first tap's) whose input
 * column ix0 + lane_dx is inside [0, input_w), of the lanes `row`: -ix0 <= lane_dx < input_w -
 * ix0, both bounds clamped to 0..255 (a lane past the row has lane_dx 255 and is off in `row`). */
static inline mve_pred16_t taps_inside(uint8x16_t lane_dx, int32_t ix0, int32_t in_w,
                                       mve_pred16_t row)
{
    const int32_t lo = ix0 < 0 ? (-ix0 > 255 ? 255 : -ix0) : 0;
    const int32_t hi0 = in_w - ix0;
    const int32_t hi = hi0 < 0 ? 0 : (hi0 > 255 ? 255 : hi0);
    return row & vcmpcsq_n_u8(lane_dx, (uint8_t)lo) &
           vcmphiq_u8(vdupq_n_u8((uint8_t)hi), lane_dx);
}

/* A dilated window whose rows are at most 32 bytes (conv_3x3_dil2 on 2 to 10 channels): each
 * half row is one VLDRB gather (w->offsets: the taps' bytes dw * c apart) and one predicated
 * VSTRB, its taps in the padding masked out of the gather and set to the zero point with VPSEL
 * (taps_inside), a row in the padding one or two VSTRB of the zero point. About 6 instructions a
 * half row instead of 8 a tap. */
static ALWAYS_INLINE void gather_column(const window_copy *w, const int8_t *image, int32_t oy,
                                        int32_t ox, int8_t *col, const int wide)
{
    const mb_conv2d_s8_params *p = w->p;
    const int32_t c = p->input_c, row = w->row, fh = p->filter_h;
    const int32_t row_step = p->dilation_h * w->pitch, dh = p->dilation_h;
    const uint32_t in_h = (uint32_t)p->input_h;
    const int32_t in_w = p->input_w;
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    const int8x16_t zero_point = vdupq_n_s8((int8_t)(-p->input_offset));
    const uint8x16_t offsets = w->offsets[0];
    const mve_pred16_t in_row = w->in_row, zeros = w->zeros;
    const int inside = ix0 >= 0 && ix0 <= in_w - 1 - w->span_w;
    const mve_pred16_t taps = inside ? in_row : taps_inside(w->lane_dx[0], ix0, in_w, in_row);
    const int8_t *src = image + iy0 * w->pitch + ix0 * c;
    int8_t *dst = col;
    uint32_t iy = (uint32_t)iy0;
    if (!wide) {
        for (int32_t ky = 0; ky < fh; ky++, src += row_step, dst += row, iy += (uint32_t)dh) {
            if (iy < in_h) {
                const int8x16_t v = vldrbq_gather_offset_z_s8(src, offsets, taps);
                vstrbq_p_s8(dst, vpselq_s8(v, zero_point, taps), in_row);
            } else {
                vstrbq_p_s8(dst, zero_point, in_row);
            }
        }
    } else { /* the first 16 bytes whole (in_row is all lanes), the rest high_row */
        const uint8x16_t offsets_high = w->offsets[1];
        const mve_pred16_t high_row = w->high_row;
        const mve_pred16_t taps_high =
            inside ? high_row : taps_inside(w->lane_dx[1], ix0, in_w, high_row);
        for (int32_t ky = 0; ky < fh; ky++, src += row_step, dst += row, iy += (uint32_t)dh) {
            if (iy < in_h) {
                const int8x16_t v = vldrbq_gather_offset_z_s8(src, offsets, taps);
                vstrbq_s8(dst, vpselq_s8(v, zero_point, taps));
                const int8x16_t u = vldrbq_gather_offset_z_s8(src, offsets_high, taps_high);
                vstrbq_p_s8(dst + 16, vpselq_s8(u, zero_point, taps_high), high_row);
            } else {
                vstrbq_s8(dst, zero_point);
                vstrbq_p_s8(dst + 16, zero_point, high_row);
            }
        }
    }
    vstrbq_p_s8(dst, vdupq_n_s8(0), zeros);
}

/* The lanes [lo, hi) of a 16-byte chunk (bounds outside 0..16 clamped). */
static inline mve_pred16_t lanes_between(int32_t lo, int32_t hi)
{
    const uint32_t from = (uint32_t)(lo < 0 ? 0 : (lo > 16 ? 16 : lo));
    const uint32_t to = (uint32_t)(hi < 0 ? 0 : (hi > 16 ? 16 : hi));
    return (mve_pred16_t)(vctp8q(to) & (mve_pred16_t)~vctp8q(from));
}

/* Where an undilated window reaching into the padding lies: its first row's first tap, which
 * may lie before the image row or above the image (its lanes are not read), that row's number
 * (unsigned: above the image is over input_h), and the bytes of each row inside the input,
 * [lo, hi), from the columns inside the filter's. */
typedef struct {
    const int8_t *src;
    uint32_t iy;
    int32_t lo, hi;
} edge_window;

static ALWAYS_INLINE edge_window edge_window_of(const mb_conv2d_s8_params *p,
                                                const int8_t *image, int32_t oy, int32_t ox)
{
    const int32_t c = p->input_c, fw = p->filter_w;
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    const int32_t lo_x = ix0 < 0 ? (-ix0 < fw ? -ix0 : fw) : 0;
    const int32_t right = p->input_w - ix0;
    const intptr_t first = ((intptr_t)iy0 * p->input_w + ix0) * c;
    const edge_window e = {(const int8_t *)((uintptr_t)image + (uintptr_t)first), (uint32_t)iy0,
                           lo_x * c, (right < lo_x ? lo_x : (right > fw ? fw : right)) * c};
    return e;
}

/* An undilated window reaching into the padding: each row, 16 bytes at a time, one predicated
 * VLDRB of its taps inside the input (lanes of columns in the padding are not read) and one VSTRB
 * with the zero point in the other lanes (VPSEL), a row in the padding VSTRBs of the zero point;
 * then the zeros up to kp. mb_conv2d_column_s8 calls memset and memcpy per row: about 80
 * instructions a row. WIDE: rows of 17-32 bytes (two chunks), a constant in each copy. */
static ALWAYS_INLINE void edge_rows_column(const window_copy *w, const int8_t *image, int32_t oy,
                                           int32_t ox, int8_t *col, const int wide)
{
    const mb_conv2d_s8_params *p = w->p;
    const int32_t row = w->row, fh = p->filter_h;
    const uint32_t in_h = (uint32_t)p->input_h;
    const int8x16_t zero_point = vdupq_n_s8((int8_t)(-p->input_offset));
    const edge_window e = edge_window_of(p, image, oy, ox);
    const int32_t lo = e.lo, hi = e.hi;
    const int8_t *src = e.src;
    int8_t *dst = col;
    uint32_t iy = e.iy;
    const mve_pred16_t taps = lanes_between(lo, hi);
    if (!wide) {
        const mve_pred16_t in_row = w->in_row;
        for (int32_t ky = 0; ky < fh; ky++, src += w->pitch, dst += row, iy++) {
            if (iy < in_h) {
                vstrbq_p_s8(dst, vpselq_s8(vldrbq_z_s8(src, taps), zero_point, taps), in_row);
            } else {
                vstrbq_p_s8(dst, zero_point, in_row);
            }
        }
    } else { /* 17-32 bytes: a whole first chunk, then the lanes high_row of the second */
        const mve_pred16_t taps_high = lanes_between(lo - 16, hi - 16);
        const mve_pred16_t high_row = w->high_row;
        for (int32_t ky = 0; ky < fh; ky++, src += w->pitch, dst += row, iy++) {
            if (iy < in_h) {
                vstrbq_s8(dst, vpselq_s8(vldrbq_z_s8(src, taps), zero_point, taps));
                vstrbq_p_s8(dst + 16,
                            vpselq_s8(vldrbq_z_s8(src + 16, taps_high), zero_point, taps_high),
                            high_row);
            } else {
                vstrbq_s8(dst, zero_point);
                vstrbq_p_s8(dst + 16, zero_point, high_row);
            }
        }
    }
    vstrbq_p_s8(dst, vdupq_n_s8(0), w->zeros);
}

static __attribute__((noinline)) void edge_rows_narrow(const window_copy *w, const int8_t *image,
                                                       int32_t oy, int32_t ox, int8_t *col)
{
    edge_rows_column(w, image, oy, ox, col, 0);
}

static __attribute__((noinline)) void edge_rows_wide(const window_copy *w, const int8_t *image,
                                                     int32_t oy, int32_t ox, int8_t *col)
{
    edge_rows_column(w, image, oy, ox, col, 1);
}

/* edge_rows_column for rows of 33-128 bytes (resnet8's 3x3x16 and 3x3x32 windows: 48 and 96),
 * chunk by chunk: each chunk's lanes inside the input and inside the row are the same for every
 * row of the window, so they are worked out once; with a multiple of 16 input channels every
 * chunk is one tap, copied or the zero point. mb_conv2d_column_s8's memset and memcpy per row
 * cost about 360 instructions a window there (resnet8's border pixels: 140k of 3.1M). */
#define LONG_ROW_CHUNKS 8
static __attribute__((noinline)) void edge_rows_long(const window_copy *w, const int8_t *image,
                                                     int32_t oy, int32_t ox, int8_t *col)
{
    const mb_conv2d_s8_params *p = w->p;
    const int32_t c = p->input_c, row = w->row, fh = p->filter_h;
    const uint32_t in_h = (uint32_t)p->input_h;
    const int8x16_t zero_point = vdupq_n_s8((int8_t)(-p->input_offset));
    const edge_window e = edge_window_of(p, image, oy, ox);
    const int32_t lo = e.lo, hi = e.hi;
    const int8_t *src = e.src;
    int8_t *dst = col;
    uint32_t iy = e.iy;
    if (c % 16 == 0) { /* every chunk a whole tap: inside the input or in the padding */
        const int32_t inside_from = lo / 16, inside_to = hi / 16, whole = row / 16;
        for (int32_t ky = 0; ky < fh; ky++, src += w->pitch, dst += row, iy++) {
            int32_t b = 0;
            if (iy < in_h) { /* padding columns, the columns inside, padding columns */
                for (; b < inside_from; b++) {
                    vstrbq_s8(dst + 16 * b, zero_point);
                }
                for (; b < inside_to; b++) {
                    vstrbq_s8(dst + 16 * b, vldrbq_s8(src + 16 * b));
                }
            }
            for (; b < whole; b++) {
                vstrbq_s8(dst + 16 * b, zero_point);
            }
        }
        vstrbq_p_s8(dst, vdupq_n_s8(0), w->zeros);
        return;
    }
    const int32_t chunks = (row + 15) / 16;
    mve_pred16_t taps[LONG_ROW_CHUNKS], in_row[LONG_ROW_CHUNKS];
    for (int32_t b = 0; b < chunks; b++) {
        taps[b] = lanes_between(lo - 16 * b, hi - 16 * b);
        in_row[b] = vctp8q((uint32_t)(row - 16 * b));
    }
    for (int32_t ky = 0; ky < fh; ky++, src += w->pitch, dst += row, iy++) {
        if (iy < in_h) {
            for (int32_t b = 0; b < chunks; b++) {
                vstrbq_p_s8(dst + 16 * b,
                            vpselq_s8(vldrbq_z_s8(src + 16 * b, taps[b]), zero_point, taps[b]),
                            in_row[b]);
            }
        } else {
            for (int32_t b = 0; b < chunks; b++) {
                vstrbq_p_s8(dst + 16 * b, zero_point, in_row[b]);
            }
        }
    }
    vstrbq_p_s8(dst, vdupq_n_s8(0), w->zeros);
}

/* gather_column's two forms, each its own function (the two-half loop inlined beside the other
 * cost the rows of at most 16 bytes 4% in set-up). */
static __attribute__((noinline)) void gather_column_narrow(const window_copy *w,
                                                           const int8_t *image, int32_t oy,
                                                           int32_t ox, int8_t *col)
{
    gather_column(w, image, oy, ox, col, 0);
}

static __attribute__((noinline)) void gather_column_wide(const window_copy *w,
                                                         const int8_t *image, int32_t oy,
                                                         int32_t ox, int8_t *col)
{
    gather_column(w, image, oy, ox, col, 1);
}

/* ROWS window rows of CHUNKS whole 16-byte chunks each, `pitch` bytes apart in the input, one
 * after the other into dst. With CHUNKS a constant the chunks are loads and stores at immediate
 * offsets: the loop over them cost 3 instructions a chunk and ~6 a row around it (resnet8's
 * 3x3x16 windows: 66 instructions a pixel, now about 27). */
static ALWAYS_INLINE void copy_whole_rows(const int8_t *src, int32_t pitch, int8_t *dst,
                                          int32_t rows, const int32_t chunks)
{
    for (int32_t ky = 0; ky < rows; ky++, src += pitch, dst += 16 * chunks) {
#pragma GCC unroll 8
        for (int32_t b = 0; b < chunks; b++) {
            vstrbq_s8(dst + 16 * b, vldrbq_s8(src + 16 * b));
        }
    }
}

/* The window of output pixel (oy, ox) of `image` into col, as mb_conv2d_column_s8 does. A window
 * inside the input is copied 16 bytes at a time with predicated VLDRB/VSTRB, the last chunk of
 * a row tail-predicated (VCTP; lanes off read nothing), and the zeros up to kp are one
 * predicated VSTRB: a 3x3x3 window is 3 predicated copies of 9 bytes, ds_cnn's 10x4x1 one 10 of
 * 4, inline with no call and no memcpy size dispatch. The origin test is one unsigned compare
 * per axis. */
static ALWAYS_INLINE void column_s8(const window_copy *w, const int8_t *image, int32_t oy,
                                    int32_t ox, int8_t *col)
{
    const mb_conv2d_s8_params *p = w->p;
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    if (!w->plain || (uint32_t)iy0 > (uint32_t)w->last_iy ||
        (uint32_t)ix0 > (uint32_t)w->last_ix) {
        if (w->gather) {
            if (w->row <= 16) {
                gather_column_narrow(w, image, oy, ox, col);
            } else {
                gather_column_wide(w, image, oy, ox, col);
            }
            return;
        }
        if (w->dilated_taps) {
            dilated_column(w, image, oy, ox, col);
            return;
        }
        if (w->undilated && w->row <= 16 * LONG_ROW_CHUNKS) {
            if (w->row <= 16) {
                edge_rows_narrow(w, image, oy, ox, col);
            } else if (w->row <= 32) {
                edge_rows_wide(w, image, oy, ox, col);
            } else {
                edge_rows_long(w, image, oy, ox, col);
            }
            return;
        }
        edge_column(p, image, oy, ox, w->kp, col);
        return;
    }
    const int32_t row = w->row;
    const int32_t pitch = w->pitch;
    const int8_t *src = image + iy0 * pitch + ix0 * p->input_c;
    int8_t *dst = col;
    if (row <= 16) { /* a first layer's rows: one predicate for all of them */
        for (int32_t ky = 0; ky < p->filter_h; ky++, src += pitch, dst += row) {
            vstrbq_p_s8(dst, vldrbq_z_s8(src, w->in_row), w->in_row);
        }
    } else if (row == 48) { /* resnet8's 3x3x16 and 3x3x32: whole chunks, unrolled */
        copy_whole_rows(src, pitch, dst, p->filter_h, 3);
    } else if (row == 96) {
        copy_whole_rows(src, pitch, dst, p->filter_h, 6);
    } else if (row % 16 == 0) {
        copy_whole_rows(src, pitch, dst, p->filter_h, row / 16);
    } else {
        for (int32_t ky = 0; ky < p->filter_h; ky++, src += pitch, dst += row) {
            for (int32_t b = 0; b < row; b += 16) {
                const mve_pred16_t in_row = vctp8q((uint32_t)(row - b));
                vstrbq_p_s8(dst + b, vldrbq_z_s8(src + b, in_row), in_row);
            }
        }
    }
    vstrbq_p_s8(dst, vdupq_n_s8(0), w->zeros);
}

/* The batch image and output row and column of a flat output pixel index, walked one pixel at a
 * time instead of three divisions per pixel. */
typedef struct {
    const int8_t *image;
    int32_t oy, ox;
} pixel_at;

static ALWAYS_INLINE void next_pixel(const window_copy *w, pixel_at *at)
{
    if (++at->ox == w->p->output_w) {
        at->ox = 0;
        if (++at->oy == w->p->output_h) {
            at->oy = 0;
            at->image += w->image_bytes;
        }
    }
}

/* A 1x1 filter without padding: pixels are read in place, no column is built. Unless the depth
 * is over 16 and not a multiple of 16 and there are at least 32 output channels (a streaming
 * wake word model's 40 -> 128 channel layer): read in place, every chunk loop would end in a
 * predicated partial chunk, which the C form of the blocks pays on every channel (299
 * instructions per block of 4 pixels x 4 channels there, 0.47 per MAC); copied into columns
 * padded to whole chunks (48 taps: 20% zeros) the blocks are the whole-chunk ones. With fewer
 * output channels the copy is not paid back (mobilenet_v2's 24 -> 8 channel layer: +16%).
 * conv2d.py mve_scratch_bytes sizes the columns alike. */
static int is_direct(const mb_conv2d_s8_params *p)
{
    return p->filter_h == 1 && p->filter_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
           (p->input_c <= 16 || p->input_c % 16 == 0 || p->output_c < 32);
}

/* A fused residual ADD: its operand `other`, laid out as the output, its arithmetic (add_mve.h)
 * and `conv`, scratch for one block of pixels' conv values (4 x output_c int8) before the ADD. */
typedef struct {
    const int8_t *other;
    int8_t *conv;
    mb_add_mve arith;
} fused_add;

/* What every pixel block of run_direct and run_columns shares. */
typedef struct {
    const mb_conv2d_s8_params *p;
    const int8_t *filter;
    /* Per block of 4 channels, 16 int32 (conv2d.py with_mve_tables, after the interior
     * biases): interior biases, multipliers, left shifts, -(right shift + 1). */
    const int32_t *tables;
    int32_t kp, chunks;
    int32_t with_tail; /* the depth is not a multiple of 16: its last k % 16 taps, predicated */
    mve_pred16_t tail;
    const fused_add *add; /* 0: none */
    /* p's output zero point and activation bounds, copied here: p is reached through a pointer
     * every int8 output store may alias, so GCC reloaded them per block and per pixel; run_direct
     * and run_columns read them from their local copy of this struct, which no store reaches. */
    int32_t output_offset, activation_min, activation_max;
} direct_conv;

/* The fused residual ADD over a block's n conv values (conv, laid out as the output) and the
 * other operand's at `other`, into out (which may be other). Out of line, after the block's
 * requantization: with its three steps inlined into the conv's per-pixel loop they needed more
 * than the 8 Q registers beside the conv's, and GCC re-read the constants and spilled per 4
 * outputs (~18 instructions per output); here the loop has the registers to itself. */
static __attribute__((noinline)) void residual_add(const mb_add_mve *a, const int8_t *conv,
                                                   const int8_t *other, int8_t *out, int32_t n)
{
    const mb_add_mve arith = *a; /* a copy the output stores cannot alias */
    mb_add_mve_elements(&arith, conv, other, out, n);
}

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

/* The NP pixels' sums of the 4 channels from c ([pixel][channel of the block]) plus the
 * interior biases, requantized on 4 lanes with the block's table, stored with one VSTRB per
 * pixel, tail-predicated: the last block of a channel count that is not a multiple of 4. */
static ALWAYS_INLINE void store_block(const direct_conv *d, int32_t sums[4][CB], int32_t c,
                                      int8_t *out, const int np)
{
    const mb_conv2d_s8_params *p = d->p;
    const int32_t oc = p->output_c;
    const int32x4_t amin = vdupq_n_s32(d->activation_min);
    const int32x4_t amax = vdupq_n_s32(d->activation_max);
    const mve_pred16_t pred = vctp32q((uint32_t)(oc - c));
    const int32_t *k = d->tables + 4 * c;
    const int32x4_t ib = vldrwq_s32(k);
    const int32x4_t m = vldrwq_s32(k + 4);
    const mb_mve_shifts s = {vldrwq_s32(k + 8), vldrwq_s32(k + 12)};
    for (int32_t q = 0; q < np; q++) {
        const int32x4_t acc = vaddq_s32(vldrwq_s32(sums[q]), ib);
        int32x4_t v = mb_mve_requantize(acc, m, s, d->output_offset, amin, amax);
        vstrbq_p_s32(out + q * oc + c, v, pred);
    }
}

/* store_block for 4 whole output channels (every block of a channel count that is a multiple
 * of 4): no predicate, so no VMSR + VPST before each pixel's store, about 15 instructions per
 * block of 4 pixels. The block's constants are its table's 4 vectors. */
static ALWAYS_INLINE void store_whole_block(const direct_conv *d, int32_t sums[4][CB], int32_t c,
                                            int8_t *out, const int np)
{
    const int32_t oc = d->p->output_c;
    const int32x4_t amin = vdupq_n_s32(d->activation_min);
    const int32x4_t amax = vdupq_n_s32(d->activation_max);
    const int32_t *k = d->tables + 4 * c;
    const int32x4_t ib = vldrwq_s32(k);
    const int32x4_t m = vldrwq_s32(k + 4);
    const mb_mve_shifts s = {vldrwq_s32(k + 8), vldrwq_s32(k + 12)};
    for (int32_t q = 0; q < np; q++) {
        const int32x4_t acc = vaddq_s32(vldrwq_s32(sums[q]), ib);
        vstrbq_s32(out + q * oc + c,
                   mb_mve_requantize(acc, m, s, d->output_offset, amin, amax));
    }
}

/* A block's sums stored: store_whole_block where it applies, else store_block. With a fused
 * ADD too: the block goes to the conv scratch, which the ADD reads after the block (OTHER and
 * FUSED are unused here). */
static ALWAYS_INLINE void store_sums(const direct_conv *d, int32_t sums[4][CB], int32_t c,
                                     int8_t *out, const int8_t *other, const int np,
                                     const int fused)
{
    (void)other;
    (void)fused;
    if (c + CB <= d->p->output_c) {
        store_whole_block(d, sums, c, out, np);
    } else {
        store_block(d, sums, c, out, np);
    }
}

/* direct_block when every row is one chunk of 16 taps (kp == 16: a 1x1 filter on at most 16
 * input channels, or a window of at most 16 taps such as person_detect's 3x3x1): the NP pixels'
 * vectors are loaded once for all output channels, so each channel costs one filter load and NP
 * VMLADAV. The general loop reloads them for every channel and, for a depth under 16, pays the
 * predicated tail (a VPST before each load and each VMLADAV) every time: VWW's 8 -> 16 channel
 * 1x1 layer spent about 230 instructions per pixel there. */
static ALWAYS_INLINE void channels_by_4_pixels(const direct_conv *d, const int8_t *const *x,
                                               int8_t *out, const int chunks, const int columns,
                                               const int8x16_t *pixels);

static ALWAYS_INLINE void one_chunk_block(const direct_conv *d, const int8_t *const *x,
                                          int8_t *out, const int8_t *other, const int np,
                                          const int fused)
{
    const int32_t oc = d->p->output_c;
    /* A depth under 16 read in place: the lanes after it zeroed (the filter's are zero too) */
    const mve_pred16_t in = d->with_tail ? d->tail : vctp8q(16);
    const int8x16_t v0 = vldrbq_z_s8(x[0], in);
    if (np == 4) {
        const int8x16_t pixels[4] = {v0, vldrbq_z_s8(x[1], in), vldrbq_z_s8(x[2], in),
                                     vldrbq_z_s8(x[3], in)};
        channels_by_4_pixels(d, x, out, 1, 0, pixels);
        return;
    }
    int32_t sums[4][CB]; /* one pixel */
    const int8_t *w = d->filter;
    for (int32_t c = 0; c < oc; c += CB) {
        for (int32_t j = 0; j < CB; j++, w += 16) {
            sums[0][j] = vmladavq_s8(v0, vldrbq_s8(w));
        }
        store_sums(d, sums, c, out, other, 1, fused);
    }
}

/* One chunk of 16 taps of 4 pixels by one filter row: the filter's chunk at FILTER (an address
 * operand), pixel q's at [xq, #16 * I]; ACC: vmladav (the first chunk) or vmladava. */
#define CHUNK4(ACC, FILTER, I)                                          \
    "vldrb.8 %q[f], " FILTER "\n\t"                                     \
    "vldrb.8 %q[p], [%[x0], #" #I "*16]\n\t"                            \
    ACC ".s8 %[s0], %q[p], %q[f]\n\t"                                   \
    "vldrb.8 %q[p], [%[x1], #" #I "*16]\n\t"                            \
    ACC ".s8 %[s1], %q[p], %q[f]\n\t"                                   \
    "vldrb.8 %q[p], [%[x2], #" #I "*16]\n\t"                            \
    ACC ".s8 %[s2], %q[p], %q[f]\n\t"                                   \
    "vldrb.8 %q[p], [%[x3], #" #I "*16]\n\t"                            \
    ACC ".s8 %[s3], %q[p], %q[f]\n\t"

/* CHUNK4 for 4 columns one after the other, KP bytes apart (run_columns' scratch): pixels 1
 * and 3 at immediate offsets from pixels 0 and 2, two pointer registers fewer. */
#define CHUNK4_COLUMNS(ACC, FILTER, I, KP)                              \
    "vldrb.8 %q[f], " FILTER "\n\t"                                     \
    "vldrb.8 %q[p], [%[x0], #" #I "*16]\n\t"                            \
    ACC ".s8 %[s0], %q[p], %q[f]\n\t"                                   \
    "vldrb.8 %q[p], [%[x0], #" #KP "+" #I "*16]\n\t"                    \
    ACC ".s8 %[s1], %q[p], %q[f]\n\t"                                   \
    "vldrb.8 %q[p], [%[x2], #" #I "*16]\n\t"                            \
    ACC ".s8 %[s2], %q[p], %q[f]\n\t"                                   \
    "vldrb.8 %q[p], [%[x2], #" #KP "+" #I "*16]\n\t"                    \
    ACC ".s8 %[s3], %q[p], %q[f]\n\t"

/* The sums of 4 pixels by one filter row of CHUNKS (2 or 3) chunks (the row's chunk i at
 * w + 64 * i): per chunk 1 filter and 4 pixel loads and 4 VMLADAV(A), at immediate offsets (a
 * byte load's reach is 127: the third chunk's filter has its own pointer). In C, GCC hoisted
 * the pixels' loads out of the channel loop (they are the same for every channel), spilled them
 * past the 8 vector registers and read them back with an address add each: 42 instructions per
 * channel of a first layer instead of 22 here (resnet8's 3x3x3 layer: 334 per pixel). */
static ALWAYS_INLINE void row_sums_4(const int8_t *w, const int8_t *const *x, int32_t *s0,
                                     int32_t *s1, int32_t *s2, int32_t *s3, const int chunks,
                                     const int columns)
{
    int8x16_t f, p;
    if (columns && chunks == 2) { /* x[q] = x[0] + 32 q */
        __asm__(CHUNK4_COLUMNS("vmladav", "[%[w]]", 0, 32)
                CHUNK4_COLUMNS("vmladava", "[%[w], #64]", 1, 32)
                : [s0] "=&Te"(*s0), [s1] "=&Te"(*s1), [s2] "=&Te"(*s2), [s3] "=&Te"(*s3),
                  [f] "=&w"(f), [p] "=&w"(p)
                : [w] "r"(w), [x0] "r"(x[0]), [x2] "r"(x[2])
                : "memory");
    } else if (columns) { /* x[q] = x[0] + 48 q */
        __asm__(CHUNK4_COLUMNS("vmladav", "[%[w]]", 0, 48)
                CHUNK4_COLUMNS("vmladava", "[%[w], #64]", 1, 48)
                CHUNK4_COLUMNS("vmladava", "[%[w2]]", 2, 48)
                : [s0] "=&Te"(*s0), [s1] "=&Te"(*s1), [s2] "=&Te"(*s2), [s3] "=&Te"(*s3),
                  [f] "=&w"(f), [p] "=&w"(p)
                : [w] "r"(w), [w2] "r"(w + 2 * CB * 16), [x0] "r"(x[0]), [x2] "r"(x[2])
                : "memory");
    } else if (chunks == 2) {
        __asm__(CHUNK4("vmladav", "[%[w]]", 0) CHUNK4("vmladava", "[%[w], #64]", 1)
                : [s0] "=&Te"(*s0), [s1] "=&Te"(*s1), [s2] "=&Te"(*s2), [s3] "=&Te"(*s3),
                  [f] "=&w"(f), [p] "=&w"(p)
                : [w] "r"(w), [x0] "r"(x[0]), [x1] "r"(x[1]), [x2] "r"(x[2]), [x3] "r"(x[3])
                : "memory");
    } else {
        __asm__(CHUNK4("vmladav", "[%[w]]", 0) CHUNK4("vmladava", "[%[w], #64]", 1)
                CHUNK4("vmladava", "[%[w2]]", 2)
                : [s0] "=&Te"(*s0), [s1] "=&Te"(*s1), [s2] "=&Te"(*s2), [s3] "=&Te"(*s3),
                  [f] "=&w"(f), [p] "=&w"(p)
                : [w] "r"(w), [w2] "r"(w + 2 * CB * 16), [x0] "r"(x[0]), [x1] "r"(x[1]),
                  [x2] "r"(x[2]), [x3] "r"(x[3])
                : "memory");
    }
}

/* fixed_chunks_block's 4 pixels, one output channel at a time: row_sums_4 leaves the channel's
 * 4 sums in core registers, two VMOVs make them the lanes of one vector (lanes = pixels), the
 * channel's requantization constants are scalars from its block's table, and one VSTRB.32
 * scatter stores the 4 bytes oc apart. The block-of-4-channels form stored 16 sums to the stack
 * and read them back as 4 vectors, each requantized with the block's constant vectors: per
 * channel and 4 pixels ~49 instructions on resnet8's 3x3x3 first layer, here ~34. */
static ALWAYS_INLINE void channels_by_4_pixels(const direct_conv *d, const int8_t *const *x,
                                               int8_t *out, const int chunks, const int columns,
                                               const int8x16_t *pixels)
{
    const int32_t oc = d->p->output_c;
    const int32_t zero_point = d->output_offset;
    const int32x4_t amin = vdupq_n_s32(d->activation_min);
    const int32x4_t amax = vdupq_n_s32(d->activation_max);
    const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)oc);
    const int8_t *block = d->filter;
    const int32_t *table = d->tables;
    for (int32_t c0 = 0; c0 < oc; c0 += CB, block += CB * 16 * chunks, table += 4 * CB) {
        /* a whole block's 4 channels unrolled (rows and constants at immediate offsets) */
        const int32_t n = oc - c0 < CB ? oc - c0 : CB;
#pragma GCC unroll 4
        for (int32_t j = 0; j < CB; j++) {
            if (j >= n) {
                break;
            }
            const int32_t c = c0 + j;
            /* channel c's first chunk (_arrange_mve: chunk i at + i * 64 in its block) and its
             * constants (the block's table: 4 vectors of 4) */
            const int8_t *row = block + 16 * j;
            const int32_t *k = table + j;
            int32_t s0, s1, s2, s3;
            if (chunks == 1) { /* one_chunk_block's: the 4 pixels' only chunk, loaded once */
                const int8x16_t f = vldrbq_s8(row);
                s0 = vmladavq_s8(pixels[0], f);
                s1 = vmladavq_s8(pixels[1], f);
                s2 = vmladavq_s8(pixels[2], f);
                s3 = vmladavq_s8(pixels[3], f);
            } else {
                row_sums_4(row, x, &s0, &s1, &s2, &s3, chunks, columns);
            }
            int32x4_t v;
            __asm__("vmov %q0[2], %q0[0], %1, %3\n\t"
                    "vmov %q0[3], %q0[1], %2, %4"
                    : "=&w"(v)
                    : "r"(s0), "r"(s1), "r"(s2), "r"(s3));
            const int32x4_t acc = vshlq_r_s32(vaddq_n_s32(v, k[0]), k[2 * CB]);
            const int32x4_t hi = vqrdmulhq_n_s32(acc, k[CB]);
            const int32x4_t t = vaddq_s32(vaddq_s32(hi, hi), vshrq_n_s32(hi, 31));
            const int32x4_t y = vaddq_n_s32(vrshlq_n_s32(t, k[3 * CB]), zero_point);
            vstrbq_scatter_offset_s32(out + c, offsets, vminq_s32(vmaxq_s32(y, amin), amax));
        }
    }
}

/* direct_block when rows are exactly CHUNKS (a constant 2 or 3) chunks of 16 taps with no
 * predicated tail: a first layer's 3x3x3 window (27 taps padded to 32), ds_cnn's 10x4x1 (40 to
 * 48), a 1x1 filter on 32 input channels. 4 pixels: row_sums_4 per channel; one pixel: the
 * chunk loop unrolled in C. */
static ALWAYS_INLINE void fixed_chunks_block(const direct_conv *d, const int8_t *const *x,
                                             int8_t *out, const int8_t *other, const int np,
                                             const int fused, const int chunks,
                                             const int columns)
{
    const int32_t oc = d->p->output_c;
    int32_t sums[4][CB];
    const int8_t *w = d->filter;
    if (np == 4) {
        channels_by_4_pixels(d, x, out, chunks, columns, 0);
        return;
    }
    for (int32_t c = 0; c < oc; c += CB, w += (chunks - 1) * CB * 16) {
        for (int32_t j = 0; j < CB; j++, w += 16) {
            int32_t s0 = 0;
#pragma GCC unroll 3
            for (int32_t i = 0; i < chunks; i++) {
                s0 = vmladavaq_s8(s0, vldrbq_s8(x[0] + i * 16), vldrbq_s8(w + i * CB * 16));
            }
            sums[0][j] = s0;
        }
        store_sums(d, sums, c, out, other, np, fused);
    }
}

/* The general chunk loop's blocks. VMLADAVA accumulates only into an even general register, so
 * with LE's LR in use at most 7 sums stay in registers beside the pointers; a block of 4 pixels x
 * 4 channels is taken as 3 pixels x 2 channels twice (per 16 taps 2 filter loads, 3 pixel loads
 * and 6 VMLADAVA) and the 4th pixel by the 4 channels (sums_1x4: 4 filter loads, 1 pixel load, 4
 * VMLADAVA): 34 instructions per 256 multiply-accumulates instead of 40 for 4 passes of 4 pixels
 * x 1 channel. Whole chunks: mb_conv2d_mve_sums4x4 (assembly) for 4 pixels, sums_1x4's inline
 * assembly for one (GCC kept a copy of the filter pointer and added 64 to it apart: 11
 * instructions a chunk instead of 10). The first chunk is peeled with VMLADAV (no accumulate), so
 * the sums need no zeroing moves; the general case has at least 2 chunks (kp > 16, else
 * one_chunk_block). The sums are "Te" operands (even registers, in GCC and clang); WLS/LE keep
 * the count in LR, given as the variable `count` so that it takes no other register; "memory"
 * because the loops read the pixels, which the output stores before them may overlap. A depth
 * that is not a multiple of 16 (read in place) ends with its last taps, the input masked (the
 * filter's padding is zero): with the tail loads the assembly's operands did not fit GCC's
 * registers ("impossible constraints"), so those copies keep GCC's loop (sums_3x2_tail). */

/* Channels j and j + 1 of the block at `block` (chunk i of channel j at block + i * 64 + j *
 * 16) by pixels x0, x1, x2, into sums[0..2][j..j+1], for a depth with a partial last chunk (the
 * whole-chunk 4-pixel blocks are mb_conv2d_mve_sums4x4's). */
static ALWAYS_INLINE void sums_3x2_tail(const direct_conv *d, const int8_t *block,
                                        const int8_t *x0, const int8_t *x1, const int8_t *x2,
                                        int32_t sums[4][CB], const int j)
{
    const int8_t *w = block;
    int32_t a0 = 0, a1 = 0, b0 = 0, b1 = 0, c0 = 0, c1 = 0;
    for (int32_t i = 0; i < d->chunks; i++, w += CB * 16, x0 += 16, x1 += 16, x2 += 16) {
        const int8x16_t f0 = vldrbq_s8(w);
        const int8x16_t f1 = vldrbq_s8(w + 16);
        const int8x16_t p0 = vldrbq_s8(x0);
        a0 = vmladavaq_s8(a0, p0, f0);
        a1 = vmladavaq_s8(a1, p0, f1);
        const int8x16_t p1 = vldrbq_s8(x1);
        b0 = vmladavaq_s8(b0, p1, f0);
        b1 = vmladavaq_s8(b1, p1, f1);
        const int8x16_t p2 = vldrbq_s8(x2);
        c0 = vmladavaq_s8(c0, p2, f0);
        c1 = vmladavaq_s8(c1, p2, f1);
    }
    const int8x16_t f0 = vldrbq_s8(w);
    const int8x16_t f1 = vldrbq_s8(w + 16);
    const int8x16_t p0 = vldrbq_z_s8(x0, d->tail);
    const int8x16_t p1 = vldrbq_z_s8(x1, d->tail);
    const int8x16_t p2 = vldrbq_z_s8(x2, d->tail);
    a0 = vmladavaq_s8(a0, p0, f0);
    a1 = vmladavaq_s8(a1, p0, f1);
    b0 = vmladavaq_s8(b0, p1, f0);
    b1 = vmladavaq_s8(b1, p1, f1);
    c0 = vmladavaq_s8(c0, p2, f0);
    c1 = vmladavaq_s8(c1, p2, f1);
    sums[0][j] = a0;
    sums[0][j + 1] = a1;
    sums[1][j] = b0;
    sums[1][j + 1] = b1;
    sums[2][j] = c0;
    sums[2][j + 1] = c1;
}

/* The 16 sums of a block of 4 pixels x 4 channels of whole chunks (the general case of
 * direct_block for 4 pixels without a tail), as sums_3x2 twice and sums_1x4 compute them, in one
 * function of top-level assembly: sums[q * 4 + j] = pixel q (x[q]) by channel j of the block
 * (chunk i of channel j at block + i * 64 + j * 16), chunks >= 1. Written inline, each of the
 * three passes paid GCC's set-up of its operands (pointers reloaded from the stack, the sums
 * stored one by one): ~60 of the ~150 instructions a block spent outside the loops on resnet8's
 * 3x3x16 layers. Here a pass starts with 3 loads from the frame and ends with 3 STRD. The loops
 * are sums_3x2's and sums_1x4's: per chunk 2 filter and 3 pixel loads and 6 VMLADAVA, then 1
 * pixel and 4 filter loads and 4 VMLADAVA. Arguments (AAPCS): r0 block, r1 x (4 pointers),
 * r2 chunks, r3 sums; kept in the frame at [sp, #0..12] by the push. */
void mb_conv2d_mve_sums4x4(const int8_t *block, const int8_t *const *x, int32_t chunks,
                           int32_t *sums);

/* One chunk of a pass over 3 pixels (r5, r7, r9) and 2 channels (the walker r3 at the chunk
 * of the pass's first channel): accumulators r4/r6 (pixel 0), r8/r10 (pixel 1), r12/r0
 * (pixel 2); ACC vmladav (the first chunk) or vmladava. */
#define SUMS_3X2_CHUNK(ACC)                                                                   \
    "vldrb.8 q1, [r3, #16]\n\t"                                                               \
    "vldrb.8 q0, [r3], #64\n\t"                                                               \
    "vldrb.8 q2, [r5], #16\n\t"                                                               \
    ACC ".s8 r4, q2, q0\n\t"                                                                  \
    ACC ".s8 r6, q2, q1\n\t"                                                                  \
    "vldrb.8 q2, [r7], #16\n\t"                                                               \
    ACC ".s8 r8, q2, q0\n\t"                                                                  \
    ACC ".s8 r10, q2, q1\n\t"                                                                 \
    "vldrb.8 q2, [r9], #16\n\t"                                                               \
    ACC ".s8 r12, q2, q0\n\t"                                                                 \
    ACC ".s8 r0, q2, q1\n\t"

/* One chunk of the pass over pixel 3 (r5) and the 4 channels: accumulators r4, r6, r8, r10. */
#define SUMS_1X4_CHUNK(ACC)                                                                   \
    "vldrb.8 q2, [r5], #16\n\t"                                                               \
    "vldrb.8 q0, [r3, #16]\n\t"                                                               \
    ACC ".s8 r6, q2, q0\n\t"                                                                  \
    "vldrb.8 q0, [r3, #32]\n\t"                                                               \
    ACC ".s8 r8, q2, q0\n\t"                                                                  \
    "vldrb.8 q0, [r3, #48]\n\t"                                                               \
    ACC ".s8 r10, q2, q0\n\t"                                                                 \
    "vldrb.8 q0, [r3], #64\n\t"                                                               \
    ACC ".s8 r4, q2, q0\n\t"

/* The chunks of a pass: the first (VMLADAV), one more when the rest are odd, then two per
 * iteration of a low-overhead loop (half the LE of one per chunk: 4 instructions fewer per pass
 * on resnet8's 9-chunk rows). LR = chunks - 1 on entry. */
#define SUMS_PASS_CHUNKS(CHUNK)                                                               \
    CHUNK("vmladav")                                                                          \
    "lsrs    lr, lr, #1\n\t"                                                                  \
    "bcc     3f\n\t"                                                                          \
    CHUNK("vmladava")                                                                         \
    "3:\n\t"                                                                                  \
    "wls     lr, lr, 2f\n"                                                                    \
    "1:\n\t"                                                                                  \
    CHUNK("vmladava")                                                                         \
    CHUNK("vmladava")                                                                         \
    "le      lr, 1b\n"                                                                        \
    "2:\n\t"

/* A pass over pixels 0-2 and channels J, J + 1; their sums to byte offsets S0, S1, S2. */
#define SUMS_3X2_PASS(J, S0, S1, S2)                                                          \
    "ldr     r1, [sp, #4]\n\t"                                                                \
    "ldm     r1, {r5, r7, r9}\n\t"                                                            \
    "ldr     r3, [sp, #0]\n\t"                                                                \
    "adds    r3, #" #J "*16\n\t"                                                              \
    "ldr     lr, [sp, #8]\n\t"                                                                \
    "subs    lr, #1\n\t"                                                                      \
    SUMS_PASS_CHUNKS(SUMS_3X2_CHUNK)                                                          \
    "ldr     r1, [sp, #12]\n\t"                                                               \
    "strd    r4, r6, [r1, #" #S0 "]\n\t"                                                      \
    "strd    r8, r10, [r1, #" #S1 "]\n\t"                                                     \
    "strd    r12, r0, [r1, #" #S2 "]\n\t"

__asm__(MB_THUMB_FUNCTION_BEGIN("mb_conv2d_mve_sums4x4")
        "push    {r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
        /* pixels 0-2 x channels 0-1, then x channels 2-3 (sums [q][j] at 16 q + 4 j) */
        SUMS_3X2_PASS(0, 0, 16, 32)
        SUMS_3X2_PASS(2, 8, 24, 40)
        /* pixel 3 x channels 0-3 */
        "ldr     r1, [sp, #4]\n\t"
        "ldr     r5, [r1, #12]\n\t"
        "ldr     r3, [sp, #0]\n\t"
        "ldr     lr, [sp, #8]\n\t"
        "subs    lr, #1\n\t"
        SUMS_PASS_CHUNKS(SUMS_1X4_CHUNK)
        "ldr     r1, [sp, #12]\n\t"
        "strd    r4, r6, [r1, #48]\n\t"
        "strd    r8, r10, [r1, #56]\n\t"
        "add     sp, #16\n\t"
        "pop     {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t"
        MB_THUMB_FUNCTION_END("mb_conv2d_mve_sums4x4"));

/* The block's 4 channels by one pixel x0, into s[0..3]. */
static ALWAYS_INLINE void sums_1x4(const direct_conv *d, const int8_t *block, const int8_t *x0,
                                   int32_t s[CB], const int tail)
{
    const int8_t *w = block;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    if (!tail) {
        register int32_t count __asm__("lr") = d->chunks - 1;
        int8x16_t f, p;
        __asm__("vldrb.8 %q[p], [%[x0]], #16\n\t"
                "vldrb.8 %q[f], [%[w], #16]\n\t"
                "vmladav.s8 %[a1], %q[p], %q[f]\n\t"
                "vldrb.8 %q[f], [%[w], #32]\n\t"
                "vmladav.s8 %[a2], %q[p], %q[f]\n\t"
                "vldrb.8 %q[f], [%[w], #48]\n\t"
                "vmladav.s8 %[a3], %q[p], %q[f]\n\t"
                "vldrb.8 %q[f], [%[w]], #64\n\t"
                "vmladav.s8 %[a0], %q[p], %q[f]\n\t"
                "wls lr, lr, 2f\n"
                "1:\n\t"
                "vldrb.8 %q[p], [%[x0]], #16\n\t"
                "vldrb.8 %q[f], [%[w], #16]\n\t"
                "vmladava.s8 %[a1], %q[p], %q[f]\n\t"
                "vldrb.8 %q[f], [%[w], #32]\n\t"
                "vmladava.s8 %[a2], %q[p], %q[f]\n\t"
                "vldrb.8 %q[f], [%[w], #48]\n\t"
                "vmladava.s8 %[a3], %q[p], %q[f]\n\t"
                "vldrb.8 %q[f], [%[w]], #64\n\t"
                "vmladava.s8 %[a0], %q[p], %q[f]\n\t"
                "le lr, 1b\n"
                "2:"
                : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [w] "+r"(w),
                  [x0] "+r"(x0), [f] "=&w"(f), [p] "=&w"(p), "+r"(count)
                :
                : "memory");
    } else {
        for (int32_t i = 0; i < d->chunks; i++, w += CB * 16, x0 += 16) {
            const int8x16_t p0 = vldrbq_s8(x0);
            a0 = vmladavaq_s8(a0, p0, vldrbq_s8(w));
            a1 = vmladavaq_s8(a1, p0, vldrbq_s8(w + 16));
            a2 = vmladavaq_s8(a2, p0, vldrbq_s8(w + 32));
            a3 = vmladavaq_s8(a3, p0, vldrbq_s8(w + 48));
        }
        const int8x16_t p0 = vldrbq_z_s8(x0, d->tail);
        a0 = vmladavaq_s8(a0, p0, vldrbq_s8(w));
        a1 = vmladavaq_s8(a1, p0, vldrbq_s8(w + 16));
        a2 = vmladavaq_s8(a2, p0, vldrbq_s8(w + 32));
        a3 = vmladavaq_s8(a3, p0, vldrbq_s8(w + 48));
    }
    s[0] = a0;
    s[1] = a1;
    s[2] = a2;
    s[3] = a3;
}

/* direct_block's general case: any number of chunks, with a last partial one when TAIL (a
 * constant in each copy, so that the blocks without it carry no test or register for it). */
static ALWAYS_INLINE void general_block(const direct_conv *d, const int8_t *const *x,
                                        int8_t *out, const int8_t *other, const int np,
                                        const int fused, const int tail)
{
    const int32_t oc = d->p->output_c;
    int32_t sums[4][CB];
    const int8_t *block = d->filter;
    for (int32_t c = 0; c < oc; c += CB, block += CB * d->kp) {
        if (np == 4 && !tail) {
            mb_conv2d_mve_sums4x4(block, x, d->chunks, sums[0]);
        } else if (np == 4) {
            sums_3x2_tail(d, block, x[0], x[1], x[2], sums, 0);
            sums_3x2_tail(d, block + 32, x[0], x[1], x[2], sums, 2);
            sums_1x4(d, block, x[3], sums[3], tail);
        } else {
            sums_1x4(d, block, x[0], sums[0], tail);
        }
        store_sums(d, sums, c, out, other, np, fused);
    }
}

/* NP pixels (a constant 4 or 1 in each copy; x: their input pixels or columns) by every output
 * channel, 4 channels per block (general_block: sums_3x2 twice and sums_1x4 for 4 pixels,
 * sums_1x4 for one). The sums go to `sums`, laid out [pixel][channel of the block]; after the
 * block each pixel's 4 channels are one vector load, requantized on 4 lanes and stored with one
 * VSTRB (the last block of a channel count that is not a multiple of 4 tail-predicated). Rows are padded with zeros to a multiple
 * of 4 channels and of 16 taps (_arrange_mve): chunk i of channel c + j of a block is at
 * block + i * 64 + j * 16. Rows of one chunk take one_chunk_block; CHUNKS (a constant): 0, the
 * count read at run time, or 2 or 3, fixed_chunks_block. COLUMNS: x are run_columns' columns,
 * one after the other (kp bytes apart), not pixels read in place. */
static ALWAYS_INLINE void direct_block(const direct_conv *d, const int8_t *const *x, int8_t *out,
                                       const int8_t *other, const int np, const int fused,
                                       const int chunks, const int columns)
{
    if (d->kp == 16) {
        one_chunk_block(d, x, out, other, np, fused);
        return;
    }
    if (chunks != 0) {
        fixed_chunks_block(d, x, out, other, np, fused, chunks, columns);
        return;
    }
    if (d->with_tail) {
        general_block(d, x, out, other, np, fused, 1);
    } else {
        general_block(d, x, out, other, np, fused, 0);
    }
}

/* The fused ADD's operand for output pixel n, or 0 without one. */
static inline const int8_t *residual_at(const direct_conv *d, int32_t n)
{
    return d->add != 0 ? d->add->other + n * d->p->output_c : 0;
}

/* A 1x1 filter without padding: the pixels read in place, 4 at a time
 * (direct_block), the last 1-3 one at a time, so no pixel is computed twice (two copies of
 * direct_block keep the code small). Cheaper per output than run()'s 2 pixels x 4 channels,
 * which walks the columns twice (two channels per pass) and requantizes twice as many vectors
 * per filter block. */
static ALWAYS_INLINE void run_direct(const direct_conv *dp, const int8_t *input,
                                     int8_t *output, const int fused, const int chunks)
{
    const direct_conv dc = *dp; /* a copy the output stores cannot alias */
    const direct_conv *d = &dc;
    const mb_conv2d_s8_params *p = d->p;
    const int32_t total = p->batches * p->output_h * p->output_w;
    const int32_t oc = p->output_c;
    int32_t n = 0;
    for (; n + 4 <= total; n += 4) {
        const int8_t *x[4] = {direct_pixel(p, input, n), direct_pixel(p, input, n + 1),
                              direct_pixel(p, input, n + 2), direct_pixel(p, input, n + 3)};
        direct_block(d, x, fused ? d->add->conv : output + n * oc, 0, 4, 0, chunks, 0);
        if (fused) {
            residual_add(&d->add->arith, d->add->conv, residual_at(d, n), output + n * oc, 4 * oc);
        }
    }
    for (; n < total; n++) {
        const int8_t *x[1] = {direct_pixel(p, input, n)};
        direct_block(d, x, fused ? d->add->conv : output + n * oc, 0, 1, 0, chunks, 0);
        if (fused) {
            residual_add(&d->add->arith, d->add->conv, residual_at(d, n), output + n * oc, oc);
        }
    }
}

/* Any other filter: the 4 pixels' windows become columns in scratch
 * (column_s8), which direct_block then reads as it reads the pixels of a 1x1 filter. Each
 * channel's filter row is loaded once per 4 pixels and each block of 4 channels requantized
 * once per pixel: a first layer (3x3x3 -> 8 channels: 2 chunks of 16 taps) cost about 300
 * instructions per pixel in run()'s blocks of 2 pixels x 4 channels, most of it per-block set-up
 * and the requantization of every block twice over, not multiply-accumulates. Not inlined:
 * its own copy of direct_block then leaves run_direct's register allocation as it was. */
static ALWAYS_INLINE void run_columns(const direct_conv *dp, const int8_t *input,
                                      int8_t *output, int8_t *cols, const int fused,
                                      const int chunks)
{
    direct_conv dc = *dp; /* a copy the output and column stores cannot alias */
    dc.with_tail = 0;     /* columns are padded to whole chunks: no copy of the tail loads */
    const direct_conv *d = &dc;
    const mb_conv2d_s8_params *p = d->p;
    const int32_t total = p->batches * p->output_h * p->output_w;
    const int32_t oc = p->output_c;
    const int32_t kp = d->kp;
    const window_copy w = window_copy_of(p, kp);
    const int8_t *const x[4] = {cols, cols + kp, cols + 2 * kp, cols + 3 * kp};
    pixel_at at = {input, 0, 0};
    int32_t n = 0;
    for (; n + 4 <= total; n += 4) {
        for (int32_t q = 0; q < 4; q++, next_pixel(&w, &at)) {
            column_s8(&w, at.image, at.oy, at.ox, cols + q * kp);
        }
        direct_block(d, x, fused ? d->add->conv : output + n * oc, 0, 4, 0, chunks, 1);
        if (fused) {
            residual_add(&d->add->arith, d->add->conv, residual_at(d, n), output + n * oc, 4 * oc);
        }
    }
    for (; n < total; n++, next_pixel(&w, &at)) {
        column_s8(&w, at.image, at.oy, at.ox, cols);
        direct_block(d, x, fused ? d->add->conv : output + n * oc, 0, 1, 0, chunks, 1);
        if (fused) {
            residual_add(&d->add->arith, d->add->conv, residual_at(d, n), output + n * oc, oc);
        }
    }
}

/* The copies: each its own function, so that each gets its registers to itself. */
static __attribute__((noinline)) void run_direct_plain(const direct_conv *d, const int8_t *input,
                                                       int8_t *output)
{
    run_direct(d, input, output, 0, 0);
}

static __attribute__((noinline)) void run_direct_fused(const direct_conv *d, const int8_t *input,
                                                       int8_t *output)
{
    run_direct(d, input, output, 1, 0);
}

static __attribute__((noinline)) void run_columns_plain(const direct_conv *d,
                                                        const int8_t *input, int8_t *output,
                                                        int8_t *cols)
{
    run_columns(d, input, output, cols, 0, 0);
}

static __attribute__((noinline)) void run_columns_fused(const direct_conv *d,
                                                        const int8_t *input, int8_t *output,
                                                        int8_t *cols)
{
    run_columns(d, input, output, cols, 1, 0);
}

/* Rows of 2 or 3 whole chunks without a fused ADD (first layers, a 1x1 filter on 32 or 48
 * channels) in copies of their own: in the copies above the unrolled block changed GCC's
 * register allocation of the others (VWW's 8 -> 16 channel 1x1 layer +2%). resnet8's fused
 * convolutions have deeper rows (3x3x16: 9 chunks) and keep the general loop. */
static __attribute__((noinline)) void run_direct_chunks(const direct_conv *d,
                                                        const int8_t *input, int8_t *output)
{
    if (d->chunks == 2) {
        run_direct(d, input, output, 0, 2);
    } else {
        run_direct(d, input, output, 0, 3);
    }
}

static __attribute__((noinline)) void run_columns_chunks(const direct_conv *d,
                                                         const int8_t *input, int8_t *output,
                                                         int8_t *cols)
{
    if (d->chunks == 2) {
        run_columns(d, input, output, cols, 0, 2);
    } else {
        run_columns(d, input, output, cols, 0, 3);
    }
}

void mb_conv2d_s8_mve(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
                      const int32_t *bias, const int32_t *interior_bias,
                      const int32_t *multipliers, const int32_t *shifts,
                      const mb_residual_add_s8 *residual, int8_t *output, void *scratch)
{
    (void)bias;
    const int direct = is_direct(p);
    /* Read in place, a 1x1 filter's depth; else the column's, padded to 16 taps. */
    const int32_t k = direct ? p->input_c : p->filter_h * p->filter_w * p->input_c;
    fused_add add;
    if (residual != 0) {
        add.other = residual->other;
        /* after the columns in scratch (_scratch_mve) */
        add.conv = (int8_t *)scratch + (direct ? 0 : 4 * ((k + 15) & ~(int32_t)15));
        add.arith = mb_add_mve_of(residual->add);
    }
    (void)multipliers; /* in the tables after the interior biases (with_mve_tables) */
    (void)shifts;
    const direct_conv d = {p, filter, interior_bias + ((p->output_c + 3) & ~3),
                           (k + 15) & ~(int32_t)15,
                           direct ? k / 16 : (k + 15) / 16, direct && k % 16 != 0,
                           vctp8q((uint32_t)(k % 16)), residual != 0 ? &add : 0,
                           p->output_offset, p->activation_min, p->activation_max};
    const int fixed_chunks = !d.with_tail && (d.chunks == 2 || d.chunks == 3);
    if (fixed_chunks && residual == 0 && direct) {
        run_direct_chunks(&d, input, output);
    } else if (fixed_chunks && residual == 0) {
        run_columns_chunks(&d, input, output, (int8_t *)scratch);
    } else if (direct && residual == 0) {
        run_direct_plain(&d, input, output);
    } else if (direct) {
        run_direct_fused(&d, input, output);
    } else if (residual == 0) {
        run_columns_plain(&d, input, output, (int8_t *)scratch);
    } else {
        run_columns_fused(&d, input, output, (int8_t *)scratch);
    }
}

#else
typedef int mb_conv2d_mve_unused;
#endif
