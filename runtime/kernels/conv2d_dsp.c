/* CONV_2D variants "dsp" and "dsp16" (Arm v7E-M DSP extension: Cortex-M4/M7/M33/M55): the
 * reference's arithmetic with SMLAD, two 16-bit multiply-accumulates per instruction.
 *
 * Like conv2d_gemm.c, each output pixel's window becomes a column (im2col) whose padding taps hold
 * the input zero point (they then add filter * (zero_point + input_offset) = 0, as the reference's
 * skipping does), padded with zeros to kp, a multiple of 4 taps; every pixel is then
 * sum(filter * column) + interior_bias. The column is sign-extended to int16 once, in scratch, and
 * reused by every output channel: each group of 4 taps x0..x3 as the two words (x0, x2) and
 * (x1, x3), which is what SXTB16 makes of a word of 4 int8 and of the same word rotated by 8.
 * When the depth is a multiple of 4 the window rows are widened straight from the input; other
 * depths go through an int8 staging column.
 *
 * Blocks of 2 pixels x 2 output channels, each summed by a loop in assembly (the *_block
 * functions below). The two variants differ in the filter only:
 *   dsp:   int8 in flash, widened on the fly: per 4 taps one LDM of the 2 pixels' column words,
 *          one 8-byte filter load, 4 SXTB16, 8 SMLAD (14 instructions for 16 multiply-
 *          accumulates);
 *   dsp16: int16, widened at compile time (twice the filter's flash): one LDM of the column
 *          words, one LDM of the filter words, 8 SMLAD (10 instructions).
 *
 * The filter is arranged at compile time (microbuild/compiler/ops/conv2d.py, _arrange_dsp):
 * channels padded with a zero row to an even count, rows padded with zeros to kp, and each pair
 * of channels stored group by group: 4 taps of the first channel, the same 4 of the second (for
 * dsp16 as int16 in the order x0, x2, x1, x3).
 *
 * The epilogue: per output channel, constants derived once per call (a table in scratch), so a
 * value is requantized, offset and saturated in 5 instructions (requantize2). A fused residual
 * ADD rescales each of its two int8 inputs through a 256-entry table built once per call; when
 * its requantization is fast too, the whole ADD is about 11 instructions a value.
 *
 * Scratch, in this order (conv2d.py, _scratch_dsp): the 2 pixels' int16 columns (4 * kp bytes),
 * a dummy output row for the missing second pixel of an odd count (output_c rounded up to 4), an
 * int8 staging column (kp bytes, only for a depth that is not a multiple of 4), the channel
 * table (16 bytes per channel) and, with a residual ADD, its two tables (2 KiB). */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stdint.h>
#include <string.h>

#include "microbuild/asm_function.h"
#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/conv2d_column.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"
#include "microbuild/quant_small.h"

#define PX 2 /* output pixels per block */
#define CB 2 /* output channels per block */
#define ALWAYS_INLINE inline __attribute__((always_inline))
/* a word rotated right by 8 bits: SXTB16 of it widens the odd bytes */
#define ROR8(x) ((int32_t)(((uint32_t)(x) >> 8) | ((uint32_t)(x) << 24)))

/* The largest right shift whose rounding constant can also carry the output offset (below). */
#define MAX_FOLDED_SHIFT 22

/* mb_requantize_fast(x, m, -r) + offset for r in [1, MAX_FOLDED_SHIFT], given x2 = 2 * x with
 * |x| < 2^30, and round = 2^(r-1) + offset * 2^r. The Q31 rounding (+2^30, >> 31) and the
 * rounding right shift by r (+2^(r-1), minus 1 for a negative value, >> r) compose exactly into
 *     floor((x * m + 2^30 + 2^(30 + r) - [x < 0] * 2^31) / 2^(31 + r))
 *   = (floor((2^(r-1) * 2^32 + 2x * m + 2^31) / 2^32) - [x < 0]) >> r
 * and the floor is SMMLAR with accumulator 2^(r-1). (For x < 0 whose Q31 product rounds to 0,
 * x's sign stands in for the rounded value's: both give 0.) Adding offset * 2^r to the
 * accumulator adds exactly offset after the shift; with |x * m / 2^31| < 2^30, r <= 22 and
 * |offset| <= 128 nothing overflows. */
static ALWAYS_INLINE int32_t requantize2(int32_t x2, int32_t m, int32_t round, int32_t r)
{
    int32_t hi;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(hi) : "r"(x2), "r"(m), "r"(round));
    return (hi + (x2 >> 31)) >> r;
}

/* One output channel's requantization, derived from the compiler's arrays at the start of a
 * call. */
typedef struct {
    int32_t bias2;      /* 2 * interior_bias */
    int32_t multiplier;
    int32_t round;      /* 2^(r-1) + output_offset * 2^r */
    int32_t right;      /* r = -shift */
} channel_rq;

/* The fused residual ADD: out = clamp(rescale(in1[a] + in2[b]) + offset), with in1 and in2
 * pointing at the middle of 256-entry tables (index -128..127), exactly the reference's
 * per-input rescaling of every int8 value. */
typedef struct {
    const int32_t *in1, *in2;
    int32_t multiplier, shift, offset, round, right;
    int fast; /* round/right valid: requantize2 applies */
    int32_t act_min, act_max;
} residual_rq;

static void build_channels(const mb_conv2d_s8_params *p, const int32_t *interior_bias,
                           const int32_t *multipliers, const int32_t *shifts, channel_rq *rq,
                           int *fast)
{
    *fast = 1;
    for (int32_t c = 0; c < p->output_c; c++) {
        const int32_t r = -shifts[c];
        rq[c].bias2 = interior_bias[c] * 2;
        rq[c].multiplier = multipliers[c];
        rq[c].right = r;
        if (r >= 1 && r <= MAX_FOLDED_SHIFT) {
            rq[c].round = ((int32_t)1 << (r - 1)) + p->output_offset * ((int32_t)1 << r);
        } else {
            *fast = 0;
            rq[c].round = 0;
        }
    }
}

static int32_t magnitude(int32_t v)
{
    return v < 0 ? -v : v;
}

/* One ADD input's rescaling as a table of the 256 int8 values; returns its largest magnitude.
 * Built on every call (a row-streamed layer calls once per band: 32 times per inference on
 * resnet8), so each entry by quant_small.h's SMMULR form where the scale fits it (x = (offset +
 * v) << 20 has 28 bits: always for the converter's scales), not the reference's multiply, and
 * one table per loop with nothing else in it: both tables in one loop with the magnitudes
 * tracked per entry spent 7% of resnet8 on the M4F, mostly spills. The rescaling is monotonic in
 * v (a positive multiplier), so the largest magnitude is at one end. */
static int32_t build_add_table(int32_t offset, int32_t left, int32_t multiplier, int32_t shift,
                               int32_t *table)
{
    mb_small_scale s = {0, 0, 0};
    if (mb_small_scale_of(multiplier, shift, 8 + left, &s)) {
        for (int32_t i = 0; i < 256; i++) {
            table[i] = mb_small_scale_apply((offset + i - 128) * ((int32_t)1 << left), &s);
        }
    } else {
        for (int32_t i = 0; i < 256; i++) {
            table[i] = mb_mul_by_quantized_multiplier((offset + i - 128) * ((int32_t)1 << left),
                                                      multiplier, shift);
        }
    }
    return magnitude(table[0]) > magnitude(table[255]) ? magnitude(table[0])
                                                       : magnitude(table[255]);
}

static void build_residual(const mb_add_s8_params *add, int32_t *tables, residual_rq *res)
{
    const int32_t largest1 = build_add_table(add->input1_offset, add->left_shift,
                                             add->input1_multiplier, add->input1_shift, tables);
    const int32_t largest2 = build_add_table(add->input2_offset, add->left_shift,
                                             add->input2_multiplier, add->input2_shift,
                                             tables + 256);
    const int32_t r = -add->output_shift;
    res->in1 = tables + 128;
    res->in2 = tables + 256 + 128;
    res->multiplier = add->output_multiplier;
    res->shift = add->output_shift;
    res->offset = add->output_offset;
    res->act_min = add->activation_min;
    res->act_max = add->activation_max;
    /* requantize2 wants |sum| < 2^30; each table entry stays far below 2^29 for int8. */
    res->fast = r >= 1 && r <= MAX_FOLDED_SHIFT && largest1 < ((int32_t)1 << 29) &&
                largest2 < ((int32_t)1 << 29);
    res->right = r;
    res->round = res->fast ? ((int32_t)1 << (r - 1)) + add->output_offset * ((int32_t)1 << r) : 0;
}

static ALWAYS_INLINE int32_t residual_one(const residual_rq *res, int32_t a, int32_t b)
{
    const int32_t sum = res->in1[a] + res->in2[b];
    int32_t v;
    if (res->fast) {
        v = requantize2(sum * 2, res->multiplier, res->round, res->right);
    } else {
        v = mb_requantize_fast(sum, res->multiplier, res->shift) + res->offset;
    }
    v = v < res->act_min ? res->act_min : v;
    return v > res->act_max ? res->act_max : v;
}

/* ---- columns -------------------------------------------------------------------------------- */
/* groups of 4 int8 taps to int16 pairs (x0, x2), (x1, x3), every PX * 2 words. */
#if defined(__OPTIMIZE__) && defined(__thumb2__)
/* 4 instructions a group: compilers neither fold the rotation into SXTB16 nor pair the stores.
 * Volatile: its only effect the compiler can see is on memory. */
#define WIDEN_GROUP()                                                                           \
    __asm__ volatile("ldr    %[w], [%[s]], #4\n\t"                                              \
                     "sxtb16 %[e], %[w]\n\t"                                                    \
                     "sxtb16 %[o], %[w], ror #8\n\t"                                            \
                     "strd   %[e], %[o], [%[d]], #16"                                           \
                     : [s] "+r"(src), [d] "+r"(dst), [w] "=&r"(w), [e] "=&r"(e), [o] "=&r"(o)  \
                     :                                                                          \
                     : "memory")

/* One group of the LDM below: the word in register R widened and stored. */
#define WIDEN_WORD(R)                                                                           \
    "sxtb16 %[e], " R "\n\t"                                                                    \
    "sxtb16 %[o], " R ", ror #8\n\t"                                                            \
    "strd   %[e], %[o], [%[d]], #16\n\t"

static ALWAYS_INLINE void widen(const int8_t *src, int32_t groups, int32_t *dst)
{
    int32_t w, e, o;
    /* A word-aligned source (every window row of a depth that is a multiple of 4, in a tensor
     * the planner placed) loads 4 groups with one LDM: 15 instructions for 4 groups with the
     * loop, against 22 one group at a time. */
    int32_t blocks = ((uintptr_t)src & 3) == 0 ? groups >> 2 : 0;
    if (blocks != 0) {
        __asm__ volatile("1:\n\t"
                         "ldm    %[s]!, {r0, r1, r2, r3}\n\t"
                         WIDEN_WORD("r0") WIDEN_WORD("r1") WIDEN_WORD("r2") WIDEN_WORD("r3")
                         "subs   %[n], %[n], #1\n\t"
                         "bne    1b"
                         : [s] "+r"(src), [d] "+r"(dst), [n] "+r"(blocks), [e] "=&r"(e),
                           [o] "=&r"(o)
                         :
                         : "r0", "r1", "r2", "r3", "cc", "memory");
        groups &= 3;
    }
    for (; groups >= 2; groups -= 2) {
        WIDEN_GROUP();
        WIDEN_GROUP();
    }
    if (groups != 0) {
        WIDEN_GROUP();
    }
}
#else
static inline int32_t load32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static ALWAYS_INLINE void widen(const int8_t *src, int32_t groups, int32_t *dst)
{
    for (int32_t g = 0; g < groups; g++) {
        const int32_t w = load32(src);
        dst[0] = __sxtb16(w);
        dst[1] = __sxtb16(ROR8(w));
        src += 4;
        dst += 2 * PX;
    }
}
#endif

/* groups of 4 padding taps (the zero point as an int16 pair in each word). */
static ALWAYS_INLINE void fill(int32_t groups, int32_t pair, int32_t *dst)
{
    for (int32_t g = 0; g < groups; g++) {
        dst[0] = pair;
        dst[1] = pair;
        dst += 2 * PX;
    }
}

/* The column of a dilated window (dilation_h or dilation_w > 1), whose taps are not adjacent in
 * the input: tap by tap, each widened or filled with the zero point. */
static void dilated_column_in_place(const mb_conv2d_s8_params *p, const int8_t *image,
                                    int32_t oy, int32_t ox, int32_t zero_pair, int32_t *dst)
{
    const int32_t c4 = p->input_c / 4; /* groups per tap */
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    for (int32_t ky = 0; ky < p->filter_h; ky++) {
        const int32_t iy = iy0 + ky * p->dilation_h;
        for (int32_t kx = 0; kx < p->filter_w; kx++, dst += c4 * 2 * PX) {
            const int32_t ix = ix0 + kx * p->dilation_w;
            if (iy < 0 || iy >= p->input_h || ix < 0 || ix >= p->input_w) {
                fill(c4, zero_pair, dst);
            } else {
                widen(image + (iy * p->input_w + ix) * p->input_c, c4, dst);
            }
        }
    }
}

/* The column of output pixel (oy, ox) of one image, for a depth that is a multiple of 4: the
 * window's taps inside the input widened in place, row by row, the rest the zero point. The
 * window's rows and columns that fall inside are found once, so an interior pixel is filter_h
 * calls of widen(). */
static void column_in_place(const mb_conv2d_s8_params *p, const int8_t *image, int32_t oy,
                            int32_t ox, int32_t zero_pair, int32_t *dst)
{
    if (p->dilation_h != 1 || p->dilation_w != 1) {
        dilated_column_in_place(p, image, oy, ox, zero_pair, dst);
        return;
    }
    const int32_t c4 = p->input_c / 4; /* groups per tap */
    const int32_t row_groups = p->filter_w * c4;
    const mb_conv2d_window w = mb_conv2d_window_inside(p, oy, ox);
    const int32_t ky0 = w.ky0, ky1 = w.ky1;
    const int32_t before = w.kx0 * c4, inside = (w.kx1 - w.kx0) * c4;
    const int32_t after = row_groups - before - inside;
    const int8_t *src = image + ((w.iy0 + ky0) * p->input_w + w.ix0 + w.kx0) * p->input_c;
    const int32_t src_step = p->input_w * p->input_c;

    fill(ky0 * row_groups, zero_pair, dst);
    dst += ky0 * row_groups * 2 * PX;
    for (int32_t ky = ky0; ky < ky1; ky++) {
        fill(before, zero_pair, dst);
        widen(src, inside, dst + before * 2 * PX);
        fill(after, zero_pair, dst + (before + inside) * 2 * PX);
        dst += row_groups * 2 * PX;
        src += src_step;
    }
    fill((p->filter_h - ky1) * row_groups, zero_pair, dst);
}

/* The column of a 1x1 window without padding (the pixel's own input_c values), any depth, widened
 * straight from the input: the whole groups by widen(), the last 1-3 values (a depth that is not
 * a multiple of 4) assembled into a word whose missing bytes are 0, and they meet the filter's
 * zero padding taps anyway. The general paths' window arithmetic, fills and (for such depths) the
 * staging copy cost ~110-150 instructions a pixel on a 1x1 layer of 5-16 channels. */
static ALWAYS_INLINE void pointwise_column(const int8_t *src, int32_t c, int32_t *dst)
{
    const int32_t whole = c >> 2;
    widen(src, whole, dst);
    const int32_t rest = c & 3;
    if (rest != 0) {
        const uint8_t *tail = (const uint8_t *)src + 4 * whole;
        uint32_t w = tail[0];
        if (rest > 1) {
            w |= (uint32_t)tail[1] << 8;
        }
        if (rest > 2) {
            w |= (uint32_t)tail[2] << 16;
        }
        dst += whole * 2 * PX;
        dst[0] = __sxtb16((int32_t)w);
        dst[1] = __sxtb16(ROR8((int32_t)w));
    }
}

static void set_bytes(int8_t *dst, int8_t value, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        dst[i] = value;
    }
}

/* n bytes, a word at a time while 4 are left (v7E-M and v8-M Main load and store words at any
 * address), then bytes. */
static ALWAYS_INLINE void copy_bytes(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n >= 4; n -= 4, dst += 4, src += 4) {
        memcpy(dst, src, 4);
    }
    for (; n > 0; n--) {
        *dst++ = *src++;
    }
}

/* The window of output pixel (oy, ox) of one image as its k int8 taps (any depth); the zeros
 * that pad the column to kp taps are written once per call (run()). Most pixels' windows lie
 * inside the input: their rows are plain copies. */
static void im2col(const mb_conv2d_s8_params *p, const int8_t *image, int32_t oy, int32_t ox,
                   int8_t *col)
{
    const int32_t c = p->input_c;
    const int32_t row = p->filter_w * c;
    const int8_t zero_point = (int8_t)(-p->input_offset);
    if (p->dilation_h != 1 || p->dilation_w != 1) { /* taps not adjacent: one at a time */
        mb_conv2d_dilated_column_s8(p, image, oy, ox, p->filter_h * row, col);
        return;
    }
    const mb_conv2d_window w = mb_conv2d_window_inside(p, oy, ox);
    const int32_t ky0 = w.ky0, ky1 = w.ky1;
    const int32_t before = w.kx0 * c, inside = (w.kx1 - w.kx0) * c;
    const int32_t after = row - before - inside;
    const int8_t *src = image + ((w.iy0 + ky0) * p->input_w + w.ix0 + w.kx0) * c;
    const int32_t src_step = p->input_w * c;
    int8_t *dst = col;

    set_bytes(dst, zero_point, ky0 * row);
    dst += ky0 * row;
    if (before == 0 && after == 0) { /* most pixels: every window row a plain copy */
        for (int32_t ky = ky0; ky < ky1; ky++, dst += row, src += src_step) {
            copy_bytes(dst, src, row);
        }
    } else {
        for (int32_t ky = ky0; ky < ky1; ky++, dst += row, src += src_step) {
            set_bytes(dst, zero_point, before);
            copy_bytes(dst + before, src, inside);
            set_bytes(dst + before + inside, zero_point, after);
        }
    }
    set_bytes(dst, zero_point, (p->filter_h - ky1) * row);
}

/* ---- inner loops: one 2 x 2 block's dot products ------------------------------------------ */
/* mb_conv2d_dsp_block (int8 filter) and mb_conv2d_dsp16_block (int16 filter) sum `groups`
 * groups (groups >= 1) of a 2 x 2 block into
 *     acc = {pixel 0 channel 0, pixel 1 channel 0, pixel 0 channel 1, pixel 1 channel 1}.
 *
 * Functions of their own in assembly, because their loops need all 14 allocatable registers,
 * which inline assembly cannot have (the compiler keeps registers of its own): per group one LDM
 * of the 2 pixels' 4 column words (r0-r3), the 2 channels' 4 filter words in r4-r7, 8 SMLAD into
 * r8-r11, x and the filter advancing in r12 and lr. The filter words are
 *   dsp16: one LDM of the int16 pairs (10 instructions per 16 multiply-accumulates);
 *   dsp:   one LDRD of 4 int8 taps per channel, each widened by SXTB16 into its (x0, x2) word
 *          and, rotated by 8, its (x1, x3) word (14 instructions).
 * The loop is unrolled 8 times; a count that is not a multiple of 8 enters it part way (TBB on
 * groups % 8, as in Duff's device), and it ends when x reaches its end, kept on the stack and
 * reloaded into r0 once r0's last use in the pass is done: 3 instructions per 8 groups. */
void mb_conv2d_dsp_block(const int32_t *x, const int8_t *filter, int32_t groups, int32_t *acc);
void mb_conv2d_dsp16_block(const int32_t *x, const int32_t *filter, int32_t groups,
                           int32_t *acc);

/* MB_CONV2D_DSP_C_BLOCKS selects the C form below on Thumb-2 too (the tests run it that way). */
#if defined(__thumb2__) && !defined(MB_CONV2D_DSP_C_BLOCKS)
#define FILTER_DSP16 "ldm    lr!, {r4, r5, r6, r7}\n\t"
#define FILTER_DSP                                                                              \
    "ldrd   r4, r6, [lr], #8\n\t"                                                               \
    "sxtb16 r5, r4, ror #8\n\t"                                                                 \
    "sxtb16 r4, r4\n\t"                                                                         \
    "sxtb16 r7, r6, ror #8\n\t"                                                                 \
    "sxtb16 r6, r6\n\t"

/* One group; L is its label. */
#define BLOCK_GROUP(L, FILTER)                                                                  \
    L ":\n\t"                                                                                   \
    "ldm    r12!, {r0, r1, r2, r3}\n\t"                                                         \
    FILTER                                                                                      \
    "smlad  r8, r4, r0, r8\n\t"                                                                 \
    "smlad  r8, r5, r1, r8\n\t"                                                                 \
    "smlad  r9, r4, r2, r9\n\t"                                                                 \
    "smlad  r9, r5, r3, r9\n\t"                                                                 \
    "smlad  r10, r6, r0, r10\n\t"                                                               \
    "smlad  r10, r7, r1, r10\n\t"                                                               \
    "smlad  r11, r6, r2, r11\n\t"                                                               \
    "smlad  r11, r7, r3, r11\n\t"

#define BLOCK_ENTRY(NAME, G) ".byte  (.L" NAME "_g" G " - .L" NAME "_table) / 2\n\t"

#define BLOCK_FUNCTION(NAME, FILTER)                                                            \
    __asm__(MB_THUMB_FUNCTION_BEGIN(NAME)                                                       \
            "push   {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"                                 \
            "add    r4, r0, r2, lsl #4\n\t" /* x's end: 16 bytes a group */                     \
            "push   {r3, r4}\n\t"           /* [sp] = acc, [sp, #4] = x's end */                \
            "and    r2, r2, #7\n\t"                                                             \
            "mov    r12, r0\n\t"                                                                \
            "mov    lr, r1\n\t"                                                                 \
            "movs   r8, #0\n\t"                                                                 \
            "movs   r9, #0\n\t"                                                                 \
            "movs   r10, #0\n\t"                                                                \
            "movs   r11, #0\n\t"                                                                \
            "tbb    [pc, r2]\n"                                                                 \
            ".L" NAME "_table:\n\t"                                                             \
            BLOCK_ENTRY(NAME, "0") BLOCK_ENTRY(NAME, "7") BLOCK_ENTRY(NAME, "6")                \
            BLOCK_ENTRY(NAME, "5") BLOCK_ENTRY(NAME, "4") BLOCK_ENTRY(NAME, "3")                \
            BLOCK_ENTRY(NAME, "2") BLOCK_ENTRY(NAME, "1")                                       \
            ".p2align 1\n"                                                                      \
            BLOCK_GROUP(".L" NAME "_g0", FILTER) BLOCK_GROUP(".L" NAME "_g1", FILTER)           \
            BLOCK_GROUP(".L" NAME "_g2", FILTER) BLOCK_GROUP(".L" NAME "_g3", FILTER)           \
            BLOCK_GROUP(".L" NAME "_g4", FILTER) BLOCK_GROUP(".L" NAME "_g5", FILTER)           \
            BLOCK_GROUP(".L" NAME "_g6", FILTER) BLOCK_GROUP(".L" NAME "_g7", FILTER)           \
            "ldr    r0, [sp, #4]\n\t"                                                           \
            "cmp    r12, r0\n\t"                                                                \
            "bne    .L" NAME "_g0\n\t"                                                          \
            "ldr    r0, [sp]\n\t"                                                               \
            "stm    r0, {r8, r9, r10, r11}\n\t"                                                 \
            "add    sp, sp, #8\n\t"                                                             \
            "pop    {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t"                                 \
            MB_THUMB_FUNCTION_END(NAME))

BLOCK_FUNCTION("mb_conv2d_dsp_block", FILTER_DSP);
BLOCK_FUNCTION("mb_conv2d_dsp16_block", FILTER_DSP16);
#else
/* The same in C, for a DSP core compiled to the Arm (not Thumb) instruction set. */
static void block_c(const int32_t *x, const int8_t *f8, const int32_t *f16, int32_t groups,
                    int32_t *acc)
{
    int32_t a00 = 0, a10 = 0, a01 = 0, a11 = 0;
    for (int32_t g = 0; g < groups; g++) {
        int32_t w[4];
        if (f16 != 0) {
            memcpy(w, f16, sizeof w);
            f16 += 4;
        } else {
            int32_t raw[2];
            memcpy(raw, f8, sizeof raw);
            w[0] = __sxtb16(raw[0]);
            w[1] = __sxtb16(ROR8(raw[0]));
            w[2] = __sxtb16(raw[1]);
            w[3] = __sxtb16(ROR8(raw[1]));
            f8 += 8;
        }
        a00 = __smlad(w[0], x[0], __smlad(w[1], x[1], a00));
        a10 = __smlad(w[0], x[2], __smlad(w[1], x[3], a10));
        a01 = __smlad(w[2], x[0], __smlad(w[3], x[1], a01));
        a11 = __smlad(w[2], x[2], __smlad(w[3], x[3], a11));
        x += 4;
    }
    acc[0] = a00;
    acc[1] = a10;
    acc[2] = a01;
    acc[3] = a11;
}

void mb_conv2d_dsp_block(const int32_t *x, const int8_t *filter, int32_t groups, int32_t *acc)
{
    block_c(x, filter, 0, groups, acc);
}

void mb_conv2d_dsp16_block(const int32_t *x, const int32_t *filter, int32_t groups,
                           int32_t *acc)
{
    block_c(x, 0, filter, groups, acc);
}
#endif

/* ---- the epilogue ------------------------------------------------------------------------------ */
/* How a call's values are finished, a constant in each of run()'s three copies:
 *   PLAIN:    every channel's requantization fast, the whole int8 range, no residual ADD (the
 *             common case, compiled without the checks);
 *   RESIDUAL: the same for the conv, then a fused residual ADD whose requantization is fast too
 *             and whose range is the whole int8 range: its constants stay in registers;
 *   GENERAL:  anything else, each property checked per value. */
enum { GENERAL, PLAIN, RESIDUAL };

/* The residual ADD of RESIDUAL mode on the conv's int8 value a and the other input's b. */
static ALWAYS_INLINE int32_t residual_fast(const int32_t *in1, const int32_t *in2, int32_t m,
                                           int32_t round, int32_t r, int32_t a, int32_t b)
{
    const int32_t sum2 = (in1[a] + in2[b]) * 2;
    return __ssat(requantize2(sum2, m, round, r), 8);
}

/* The two pixels' values of output channel c: requantize (with the output offset), saturate
 * (SSAT when the range is all of int8), the residual ADD, store. out1/other1 are the second
 * pixel's rows (a dummy row when there is none). */
static ALWAYS_INLINE void finish(int32_t a0, int32_t a1, int32_t c, const mb_conv2d_s8_params *p,
                                 const channel_rq *rq, int mode, int fast,
                                 const int32_t *multipliers, const int32_t *shifts,
                                 const int32_t *interior_bias, int full_range,
                                 const residual_rq *res, const int8_t *other0,
                                 const int8_t *other1, int8_t *out0, int8_t *out1)
{
    int32_t v0, v1;
    if (mode != GENERAL || fast) {
        const channel_rq q = rq[c];
        v0 = requantize2(a0 * 2 + q.bias2, q.multiplier, q.round, q.right);
        v1 = requantize2(a1 * 2 + q.bias2, q.multiplier, q.round, q.right);
    } else {
        v0 = mb_requantize_fast(a0 + interior_bias[c], multipliers[c], shifts[c]) +
             p->output_offset;
        v1 = mb_requantize_fast(a1 + interior_bias[c], multipliers[c], shifts[c]) +
             p->output_offset;
    }
    if (mode != GENERAL || full_range) {
        v0 = __ssat(v0, 8);
        v1 = __ssat(v1, 8);
    } else {
        const int32_t lo = p->activation_min, hi = p->activation_max;
        v0 = v0 < lo ? lo : (v0 > hi ? hi : v0);
        v1 = v1 < lo ? lo : (v1 > hi ? hi : v1);
    }
    /* other[c] is read right before out[c] is written: the output may overwrite it. */
    if (mode == RESIDUAL) {
        v0 = residual_fast(res->in1, res->in2, res->multiplier, res->round, res->right, v0,
                           other0[c]);
        out0[c] = (int8_t)v0;
        v1 = residual_fast(res->in1, res->in2, res->multiplier, res->round, res->right, v1,
                           other1[c]);
        out1[c] = (int8_t)v1;
    } else if (mode == GENERAL && res != 0) {
        v0 = residual_one(res, v0, other0[c]);
        out0[c] = (int8_t)v0;
        v1 = residual_one(res, v1, other1[c]);
        out1[c] = (int8_t)v1;
    } else {
        out0[c] = (int8_t)v0;
        out1[c] = (int8_t)v1;
    }
}

/* ---- the whole convolution ----------------------------------------------------------------- */
/* wide (int16 filter) and mode are constants in each call. */
static ALWAYS_INLINE void run(const mb_conv2d_s8_params *p, const int8_t *input,
                              const void *filter, const int32_t *interior_bias,
                              const int32_t *multipliers, const int32_t *shifts,
                              const mb_residual_add_s8 *residual, int8_t *output, int32_t *cols,
                              int8_t *stage, const channel_rq *rq, int fast,
                              const residual_rq *res, int wide, int mode)
{
    const int32_t k = p->filter_h * p->filter_w * p->input_c;
    const int32_t kp = (k + 3) & ~(int32_t)3;
    const int32_t groups = kp / 4;
    const int32_t oc = p->output_c;
    const int32_t pixels_per_image = p->output_h * p->output_w;
    const int32_t total = p->batches * pixels_per_image;
    const int32_t image_bytes = p->input_h * p->input_w * p->input_c;
    const int in_place = (p->input_c & 3) == 0;
    /* a 1x1 window with no padding is the pixel itself (dilation does not matter) */
    const int pointwise = p->filter_h == 1 && p->filter_w == 1 && p->pad_top == 0 &&
                          p->pad_left == 0;
    const int32_t zero_point = -p->input_offset;
    const int32_t zero_pair = (int32_t)(((uint32_t)zero_point & 0xffffu) |
                                        ((uint32_t)zero_point << 16));
    const int full_range = p->activation_min == -128 && p->activation_max == 127;
    int8_t *dummy = (int8_t *)(cols + PX * kp / 2);
    residual_rq res_copy; /* RESIDUAL: a local copy, its fields kept in registers */
    if (mode == PLAIN) {
        res = 0;
        residual = 0;
    } else if (mode == RESIDUAL) {
        res_copy = *res;
        res = &res_copy;
    }

    if (!in_place) {
        set_bytes(stage + k, 0, kp - k); /* the column's padding taps, beyond every window */
    }
    for (int32_t n = 0; n < total; n += PX) {
        const int32_t np = total - n < PX ? total - n : PX;
        for (int32_t q = 0; q < PX; q++) {
            const int32_t m = n + (q < np ? q : np - 1); /* a missing pixel: the last again */
            const int32_t b = m / pixels_per_image;
            const int32_t oy = (m % pixels_per_image) / p->output_w;
            const int32_t ox = m % p->output_w;
            const int8_t *image = input + b * image_bytes;
            if (pointwise) {
                pointwise_column(image + (oy * p->stride_h * p->input_w + ox * p->stride_w) *
                                             p->input_c,
                                 p->input_c, cols + 2 * q);
            } else if (in_place) {
                column_in_place(p, image, oy, ox, zero_pair, cols + 2 * q);
            } else {
                im2col(p, image, oy, ox, stage);
                widen(stage, groups, cols + 2 * q);
            }
        }
        int8_t *out0 = output + n * oc;
        int8_t *out1 = np > 1 ? out0 + oc : dummy;
        const int8_t *other0 = residual != 0 ? residual->other + n * oc : 0;
        const int8_t *other1 = residual != 0 && np > 1 ? other0 + oc : other0;
        const int8_t *f8 = (const int8_t *)filter;
        const int32_t *f16 = (const int32_t *)filter;
        for (int32_t c = 0; c < oc; c += CB) {
            int32_t acc[4];
            if (wide) {
                mb_conv2d_dsp16_block(cols, f16, groups, acc);
                f16 += 4 * groups;
            } else {
                mb_conv2d_dsp_block(cols, f8, groups, acc);
                f8 += 8 * groups;
            }
            const int32_t a00 = acc[0], a10 = acc[1], a01 = acc[2], a11 = acc[3];
            /* the filter pointer now points at the next channel pair. */
            finish(a00, a10, c, p, rq, mode, fast, multipliers, shifts, interior_bias, full_range,
                   res, other0, other1, out0, out1);
            if (c + 1 < oc) {
                finish(a01, a11, c + 1, p, rq, mode, fast, multipliers, shifts, interior_bias,
                       full_range, res, other0, other1, out0, out1);
            }
        }
    }
}

/* Lays out the scratch, derives the tables, and runs the loop for the call's mode. */
static ALWAYS_INLINE void convolve(const mb_conv2d_s8_params *p, const int8_t *input,
                                   const void *filter, const int32_t *interior_bias,
                                   const int32_t *multipliers, const int32_t *shifts,
                                   const mb_residual_add_s8 *residual, int8_t *output,
                                   void *scratch, int wide)
{
    const int32_t kp = (p->filter_h * p->filter_w * p->input_c + 3) & ~(int32_t)3;
    const int32_t oc = p->output_c;
    int32_t *cols = (int32_t *)scratch;
    int8_t *stage = (int8_t *)scratch + PX * kp * 2 + ((oc + 3) & ~(int32_t)3);
    channel_rq *rq = (channel_rq *)(void *)(stage + ((p->input_c & 3) == 0 ? 0 : kp));
    int fast;
    build_channels(p, interior_bias, multipliers, shifts, rq, &fast);
    residual_rq res_rq;
    const residual_rq *res = 0;
    if (residual != 0) {
        build_residual(residual->add, (int32_t *)(void *)(rq + oc), &res_rq);
        res = &res_rq;
    }
    const int conv_plain = fast && p->activation_min == -128 && p->activation_max == 127;
    if (conv_plain && res == 0) {
        run(p, input, filter, interior_bias, multipliers, shifts, residual, output, cols, stage,
            rq, fast, res, wide, PLAIN);
    } else if (conv_plain && res->fast && res->act_min == -128 && res->act_max == 127) {
        run(p, input, filter, interior_bias, multipliers, shifts, residual, output, cols, stage,
            rq, fast, res, wide, RESIDUAL);
    } else {
        run(p, input, filter, interior_bias, multipliers, shifts, residual, output, cols, stage,
            rq, fast, res, wide, GENERAL);
    }
}

void mb_conv2d_s8_dsp(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
                      const int32_t *bias, const int32_t *interior_bias,
                      const int32_t *multipliers, const int32_t *shifts,
                      const mb_residual_add_s8 *residual, int8_t *output, void *scratch)
{
    (void)bias;
    convolve(p, input, filter, interior_bias, multipliers, shifts, residual, output, scratch, 0);
}

void mb_conv2d_s8_dsp16(const mb_conv2d_s8_params *p, const int8_t *input, const int8_t *filter,
                        const int32_t *bias, const int32_t *interior_bias,
                        const int32_t *multipliers, const int32_t *shifts,
                        const mb_residual_add_s8 *residual, int8_t *output, void *scratch)
{
    (void)bias;
    convolve(p, input, filter, interior_bias, multipliers, shifts, residual, output, scratch, 1);
}

#else
typedef int mb_conv2d_dsp_unused;
#endif
