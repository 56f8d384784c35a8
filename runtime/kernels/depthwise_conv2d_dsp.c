/* DEPTHWISE_CONV_2D, Arm DSP variant "dsp" (Cortex-M4/M7/M33/M55): depth multiplier 1, no
 * dilation.
 *
 * Blocks of 4 channels are the outermost loop; the last 2-3 channels of a depth that is not a
 * multiple of 4 are a block too, its missing lanes zero (the loads assemble only its channels'
 * bytes, its rows are written to a 4-byte-pixel staging row and copied out; a lone last
 * channel, and a temporal one's tail, go straight from the definition). The input rows the
 * current output row needs are kept sign-extended in a ring of filter_h "band" rows in the
 * scratch, padded left and right (and above and below the input) with the input zero point, so
 * every input row is widened once per block however many taps read it. With the zero point in
 * the padding every output pixel is an interior one: it starts from interior_bias and sums
 * filter * input over all taps (a padding tap adds filter * zero_point, which interior_bias =
 * bias - zero_point * sum(filter) takes back exactly; the same int32 as the reference).
 *
 * Band entry: 4 words, one per channel of the block, each the int16 pair (padded pixel a,
 * pixel a + 1) of that channel, so one SMLAD multiplies two horizontally adjacent taps. Entry j
 * starts at pixel a = j * q: q = 1 (every pixel starts an entry), or q = 2 for the 3x3 stride-2
 * rows, which only ever start a pair on an even pixel.
 *
 * The block's constants, "consts", are read in this order by the row loops:
 *   interior_bias of the 4 channels, each times 2^(left shift + 1);
 *   3x3 filter, stride 1 or 2 ("fast3"): per filter row, the 4 channels' (tap 0, tap 1) pairs
 *     and then their tap-2 words: (0, tap 2) for stride 1, which meets the entry after the
 *     output pixel's (pixels a + 1, a + 2), and (tap 2, 0) for stride 2 (pixels a + 2, a + 3);
 *   any other filter: per filter row, per pair of adjacent taps (kx, kx + 1), kx even, the 4
 *     channels' (tap kx, tap kx + 1) pairs, the row's last pair (tap, 0) when the filter width
 *     is odd; the pair meets the entry of the tap's pixel, (pixels a, a + 1), in one SMLAD (a
 *     1-wide filter, the temporal loop's, has one (tap, 0) word per tap);
 *   per channel: multiplier, offset, right shift + 1 (the requantization below).
 * Filter taps are stored times 2^(left shift + 1), so the accumulator already holds what the
 * requantization's rounding multiply-high wants: acc * 2^(left + 1).
 *
 * fast3 output pixel: per filter row one LDM of its entry (4 channel pairs), one LDM of 4 filter
 * pairs, 4 SMLAD, the same for the next entry and the tap-2 words: 36 multiply-accumulates in 36
 * multiplies and 12 loads. Its row loop is a function in assembly (mb_depthwise_dsp_row3),
 * because it needs all 14 allocatable registers: the pairs in r0-r3, filter words in r4-r7,
 * accumulators in r8-r11, the constants streaming through r12 and the band entry in lr.
 *
 * Requantization: (acc * 2^left * multiplier + 2^30) >> 31 is hi = SMMULR(acc * 2^(left + 1),
 * multiplier); the rounding right shift (half away from zero) by `right`, plus the output zero
 * point zo, is (2 * hi + offset - (hi < 0)) >> (right + 1) with offset = 2^right +
 * zo * 2^(right + 1): adding a multiple of 2^(right + 1) before the arithmetic shift adds zo
 * after it. The compiler only picks this variant when |acc| * 2^left < 2^28, left <= 7 (taps
 * times 2^(left + 1) are int16) and right <= 22 (|2 * hi| + |offset| < 2^31) for every channel
 * (depthwise_conv2d.py), so nothing here overflows. Then SSAT to int8 and, when the activation
 * is narrower than int8, a byte-wise clamp (SSUB8 + SEL) of the 4 packed outputs.
 *
 * Scratch (depthwise_conv2d.py's _dsp_scratch): DW_HEAD_BYTES, the consts (16 + 16 * taps + 48
 * bytes at most), a row pointer per filter row, and filter_h band rows of at most
 * ((output_w - 1) * stride_w + filter_w) entries of 16 bytes, then for a tail block the staging
 * row (4 * output_w bytes). Weights as stored. */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stddef.h>
#include <string.h>

#include "microbuild/asm_function.h"
#include "microbuild/kernels/depthwise_conv2d.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

/* One output row of a fast3 block: what mb_depthwise_dsp_row3 reads (it copies the first 8
 * words to its stack frame; the assembly below relies on these offsets). */
typedef struct {
    const int32_t *row[3];  /*  0: band entry of output pixel 0, per filter row */
    int8_t *out;            /* 12: the block's first output byte in this row */
    int32_t channels;       /* 16: output bytes between adjacent pixels */
    int32_t width;          /* 20: output pixels, >= 1 */
    uint32_t amin4, amax4;  /* 24: the activation range, in each byte (clamping copy only) */
    const int32_t *consts;  /* 32: the block's constants, 160 bytes for fast3 */
} dw_row3;

#define DW_HEAD_BYTES 48  /* sizeof(dw_row3) rounded up; depthwise_conv2d.py reserves it */

static inline uint32_t dw_load32(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

static inline int32_t dw_odd(uint32_t v)
{
    int32_t r; /* SXTB16 Rd, Rm, ROR #8 (gcc 12 does not fold a rotate into __sxtb16) */
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

static inline int32_t dw_smmulr(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* The block's `lanes` channels at p (a tail block's 1-3 channels are the last of the pixel,
 * possibly of the tensor: the bytes after them are not read, the word's missing lanes are 0). */
static inline __attribute__((always_inline)) uint32_t dw_load_lanes(const int8_t *p,
                                                                    int32_t lanes)
{
    if (lanes == 4) {
        return dw_load32(p);
    }
    const uint8_t *b = (const uint8_t *)p;
    uint32_t v = b[0];
    if (lanes > 1) {
        v |= (uint32_t)b[1] << 8;
    }
    if (lanes > 2) {
        v |= (uint32_t)b[2] << 16;
    }
    return v;
}

/* The int16 pair (lo, hi) in one word. */
static inline int32_t dw_pair(int32_t lo, int32_t hi)
{
    return (int32_t)(((uint32_t)lo & 0xffffu) | ((uint32_t)hi << 16));
}

/* ---- the output row loops ------------------------------------------------------------------ */
/* The 4 accumulators of one output pixel to its 4 bytes at out, q = the consts' requantization
 * words (see the top of the file). Always inlined: called, the sums go through the stack and
 * the call costs as much as the temporal loop's taps. */
static inline __attribute__((always_inline)) void dw_finish4(const int32_t *acc, const int32_t *q,
                                                             int8_t *out, int32_t amin,
                                                             int32_t amax)
{
    for (int32_t j = 0; j < 4; j++, q += 3) {
        const int32_t hi = dw_smmulr(acc[j], q[0]);
        const int32_t t = (int32_t)(((uint32_t)hi << 1) + (uint32_t)q[1] - ((uint32_t)hi >> 31));
        out[j] = (int8_t)mb_clamp_i32(__ssat(t >> q[2], 8), amin, amax);
    }
}

/* mb_depthwise_dsp_row3 (the whole int8 range) and mb_depthwise_dsp_row3_clamp: one output row
 * of a fast3 block, described by r. */
void mb_depthwise_dsp_row3(const dw_row3 *r);
void mb_depthwise_dsp_row3_clamp(const dw_row3 *r);

/* MB_CONV2D_DSP_C_BLOCKS selects the C form below on Thumb-2 too (the tests run it that way). */
#if defined(__thumb2__) && !defined(MB_CONV2D_DSP_C_BLOCKS)
/* One filter row: the output pixel's entry and the next one, 4 SMLAD each. `off` is the row's
 * entry pointer in the stack frame, stored back one entry on (the next output pixel's). */
#define ROW3_TAPS(off)                                                                          \
    "ldr    lr, [sp, #" off "]\n\t"                                                             \
    "ldm    lr!, {r0, r1, r2, r3}\n\t"                                                          \
    "ldm    r12!, {r4, r5, r6, r7}\n\t"                                                         \
    "smlad  r8, r0, r4, r8\n\t"                                                                 \
    "smlad  r9, r1, r5, r9\n\t"                                                                 \
    "smlad  r10, r2, r6, r10\n\t"                                                               \
    "smlad  r11, r3, r7, r11\n\t"                                                               \
    "ldm    lr, {r0, r1, r2, r3}\n\t"                                                           \
    "ldm    r12!, {r4, r5, r6, r7}\n\t"                                                         \
    "smlad  r8, r0, r4, r8\n\t"                                                                 \
    "smlad  r9, r1, r5, r9\n\t"                                                                 \
    "smlad  r10, r2, r6, r10\n\t"                                                               \
    "smlad  r11, r3, r7, r11\n\t"                                                               \
    "str    lr, [sp, #" off "]\n\t"

/* Accumulators A and B with the multiplier, offset and right shift + 1 in M, O, R (T free). */
#define ROW3_REQUANTIZE(A, M, O, R, T)                                                          \
    "smmulr " A ", " A ", " M "\n\t"                                                            \
    "add    " T ", " O ", " A ", lsl #1\n\t"                                                    \
    "sub    " A ", " T ", " A ", lsr #31\n\t"                                                   \
    "asr    " A ", " A ", " R "\n\t"                                                            \
    "ssat   " A ", #8, " A "\n\t"

#define ROW3_NO_CLAMP ""
#define ROW3_CLAMP                                                                              \
    "ldrd   r0, r1, [sp, #24]\n\t"                                                              \
    "ssub8  r2, r8, r0\n\t"  /* GE per byte where the output >= amin */                         \
    "sel    r8, r8, r0\n\t"                                                                     \
    "ssub8  r2, r1, r8\n\t"  /* GE per byte where amax >= the output */                         \
    "sel    r8, r8, r1\n\t"

#define ROW3_FUNCTION(NAME, CLAMP)                                                              \
    __asm__(MB_THUMB_FUNCTION_BEGIN(NAME)                                                       \
            "push   {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"                                 \
            "sub    sp, sp, #36\n\t"  /* 8-byte aligned with the 9 registers */                 \
            "ldr    r12, [r0, #32]\n\t"                                                         \
            "ldm    r0, {r1, r2, r3, r4, r5, r6, r7, r8}\n\t"                                   \
            "stm    sp, {r1, r2, r3, r4, r5, r6, r7, r8}\n"                                     \
            ".L" NAME "_pixel:\n\t"                                                             \
            "ldm    r12!, {r8, r9, r10, r11}\n\t"                                               \
            ROW3_TAPS("0") ROW3_TAPS("4") ROW3_TAPS("8")                                        \
            "ldm    r12!, {r0, r1, r2, r3, r4, r5}\n\t"                                         \
            ROW3_REQUANTIZE("r8", "r0", "r1", "r2", "r6")                                       \
            ROW3_REQUANTIZE("r9", "r3", "r4", "r5", "r7")                                       \
            "ldm    r12!, {r0, r1, r2, r3, r4, r5}\n\t"                                         \
            ROW3_REQUANTIZE("r10", "r0", "r1", "r2", "r6")                                      \
            ROW3_REQUANTIZE("r11", "r3", "r4", "r5", "r7")                                      \
            "bfi    r8, r9, #8, #8\n\t"                                                         \
            "bfi    r8, r10, #16, #8\n\t"                                                       \
            "bfi    r8, r11, #24, #8\n\t"                                                       \
            CLAMP                                                                               \
            "ldrd   r0, r1, [sp, #12]\n\t"                                                      \
            "str    r8, [r0]\n\t"     /* 4 channels' bytes: STR may be unaligned here */        \
            "add    r0, r0, r1\n\t"                                                             \
            "str    r0, [sp, #12]\n\t"                                                          \
            "sub    r12, r12, #160\n\t" /* back to the block's 160 bytes of consts */               \
            "ldr    r0, [sp, #20]\n\t"                                                          \
            "subs   r0, r0, #1\n\t"                                                             \
            "str    r0, [sp, #20]\n\t"                                                          \
            "bne    .L" NAME "_pixel\n\t"                                                       \
            "add    sp, sp, #36\n\t"                                                            \
            "pop    {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t"                                 \
            MB_THUMB_FUNCTION_END(NAME))

ROW3_FUNCTION("mb_depthwise_dsp_row3", ROW3_NO_CLAMP);
ROW3_FUNCTION("mb_depthwise_dsp_row3_clamp", ROW3_CLAMP);
#else
/* The same in C, for a DSP core compiled to the Arm (not Thumb) instruction set. */
static void dw_row3_c(const dw_row3 *r, int32_t amin, int32_t amax)
{
    const int32_t *x[3] = {r->row[0], r->row[1], r->row[2]};
    int8_t *out = r->out;
    for (int32_t n = r->width; n > 0; n--, out += r->channels) {
        const int32_t *k = r->consts;
        int32_t acc[4] = {k[0], k[1], k[2], k[3]};
        k += 4;
        for (int32_t ky = 0; ky < 3; ky++, k += 8) {
            for (int32_t j = 0; j < 4; j++) {
                acc[j] = __smlad(x[ky][j], k[j], acc[j]);
                acc[j] = __smlad(x[ky][4 + j], k[4 + j], acc[j]);
            }
            x[ky] += 4;
        }
        dw_finish4(acc, k, out, amin, amax);
    }
}

void mb_depthwise_dsp_row3(const dw_row3 *r)
{
    dw_row3_c(r, -128, 127);
}

void mb_depthwise_dsp_row3_clamp(const dw_row3 *r)
{
    dw_row3_c(r, (int8_t)r->amin4, (int8_t)r->amax4);
}
#endif

/* One output row, any filter size and stride: per filter row and pair of adjacent taps one
 * SMLAD per channel on the entry that starts at the pair's first pixel (the band has q = 1, so
 * an entry starts at every pixel whatever the stride). The sums stay in four locals: kept in an
 * array whose address dw_finish4 takes, gcc stored them back to the stack on every pair. Not
 * inlined (nor the temporal loop): in the caller they cost the 3x3 band fill registers. */
static __attribute__((noinline)) void dw_row_any(const mb_depthwise_conv2d_s8_params *p,
                                                 const int32_t *const *rows,
                                                 const int32_t *consts, int8_t *out,
                                                 int32_t out_step)
{
    const int32_t pairs = (p->filter_w + 1) / 2;
    const int32_t *const q = consts + 4 + 4 * p->filter_h * pairs;
    for (int32_t ox = 0; ox < p->output_w; ox++, out += out_step) {
        int32_t a0 = consts[0], a1 = consts[1], a2 = consts[2], a3 = consts[3];
        const int32_t *f = consts + 4;
        for (int32_t ky = 0; ky < p->filter_h; ky++) {
            const int32_t *x = rows[ky] + 4 * ox * p->stride_w;
            for (int32_t k = 0; k < pairs; k++, x += 8, f += 4) {
                a0 = __smlad(x[0], f[0], a0);
                a1 = __smlad(x[1], f[1], a1);
                a2 = __smlad(x[2], f[2], a2);
                a3 = __smlad(x[3], f[3], a3);
            }
        }
        const int32_t acc[4] = {a0, a1, a2, a3};
        dw_finish4(acc, q, out, p->activation_min, p->activation_max);
    }
}

/* 1-D temporal depthwise (W = 1, an H x 1 filter, every tap inside the input: the valid
 * padding of a streaming audio model's time convolutions, e.g. 1x28x1x128 -> 1x24x1x128 with a
 * 5x1 filter). The band would hold one entry per row, filled and rotated for every output
 * pixel (about 30 instructions a MAC); here each tap reads the 4 channels' input word straight
 * from its row, SXTB16 splits it into channels (0, 2) and (1, 3), and SMLABB / SMLATT multiply
 * them by the tap's two words, (channel 0, channel 2) and (channel 1, channel 3) (dw_block_consts
 * with `temporal`): the same int32 sums from interior_bias. The tap loop is inline assembly, 11
 * instructions a tap: in C, GCC ran out of registers, kept the filter words in VFP registers and
 * took 19. */
static int dw_is_temporal(const mb_depthwise_conv2d_s8_params *p)
{
    return p->input_w == 1 && p->output_w == 1 && p->filter_w == 1 && p->pad_left == 0 &&
           p->pad_top == 0 && (p->output_h - 1) * p->stride_h + p->filter_h <= p->input_h;
}

/* One channel's output byte from its sum (dw_finish4's arithmetic, q its 3 words). */
static inline __attribute__((always_inline)) void dw_finish1(int32_t acc, const int32_t *q,
                                                             int8_t *out, int32_t amin,
                                                             int32_t amax)
{
    const int32_t hi = dw_smmulr(acc, q[0]);
    const int32_t t = (int32_t)(((uint32_t)hi << 1) + (uint32_t)q[1] - ((uint32_t)hi >> 31));
    *out = (int8_t)mb_clamp_i32(__ssat(t >> q[2], 8), amin, amax);
}

/* The output column of channels c0 .. c0 + 3 of one batch: in and out at its first pixel's c0. */
static __attribute__((noinline)) void dw_temporal_block(const mb_depthwise_conv2d_s8_params *p,
                                                        const int8_t *in, const int32_t *consts,
                                                        int8_t *out)
{
    const int32_t channels = p->input_c, kh = p->filter_h;
    const int32_t step = p->stride_h * channels;
    const int32_t amin = p->activation_min, amax = p->activation_max;
    const int32_t out_h = p->output_h;
    const int32_t *const q = consts + 4 + 4 * kh;
    for (int32_t oy = 0; oy < out_h; oy++, in += step, out += channels) {
        int32_t a0 = consts[0], a1 = consts[1], a2 = consts[2], a3 = consts[3];
        const int32_t *f = consts + 4;
        const int8_t *x = in;
#if defined(__OPTIMIZE__)
        int32_t k = kh, v, odd, w02, w13;
        __asm__("1:\n\t"
                "ldr     %[v], [%[x]]\n\t"
                "add     %[x], %[x], %[ch]\n\t"
                "ldrd    %[w02], %[w13], [%[f]], #16\n\t"
                "sxtb16  %[odd], %[v], ror #8\n\t"
                "sxtb16  %[v], %[v]\n\t"
                "smlabb  %[a0], %[v], %[w02], %[a0]\n\t"
                "smlatt  %[a2], %[v], %[w02], %[a2]\n\t"
                "smlabb  %[a1], %[odd], %[w13], %[a1]\n\t"
                "smlatt  %[a3], %[odd], %[w13], %[a3]\n\t"
                "subs    %[k], %[k], #1\n\t"
                "bne     1b"
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x),
                  [f] "+r"(f), [k] "+r"(k), [v] "=&r"(v), [odd] "=&r"(odd), [w02] "=&r"(w02),
                  [w13] "=&r"(w13)
                : [ch] "r"(channels)
                : "cc", "memory");
#else /* -O0 keeps a frame pointer: 12 operands do not fit the registers left */
        for (int32_t k = 0; k < kh; k++, x += channels, f += 4) {
            const uint32_t v = dw_load32(x);
            const int32_t even = __sxtb16(v), odd = dw_odd(v);
            a0 = __smlabb(even, f[0], a0);
            a2 = __smlatt(even, f[0], a2);
            a1 = __smlabb(odd, f[1], a1);
            a3 = __smlatt(odd, f[1], a3);
        }
#endif
        dw_finish1(a0, q, out, amin, amax);
        dw_finish1(a1, q + 3, out + 1, amin, amax);
        dw_finish1(a2, q + 6, out + 2, amin, amax);
        dw_finish1(a3, q + 9, out + 3, amin, amax);
    }
}

/* ---- the block's constants and band rows --------------------------------------------------- */
/* The consts of channels c0 .. c0 + 3 (layout at the top of the file). */
static inline __attribute__((always_inline)) void dw_block_consts(
    const mb_depthwise_conv2d_s8_params *p, const int8_t *filter,
                            const int32_t *interior_bias, const int32_t *multipliers,
                            const int32_t *shifts, int32_t c0, int32_t lanes, int fast3,
                            int temporal, int32_t *k)
{
    const int32_t channels = p->input_c;
    int32_t scale[4];
    for (int32_t j = 0; j < 4; j++) {
        const int32_t s = j < lanes ? shifts[c0 + j] : 0;
        scale[j] = (s > 0 ? s : 0) + 1;
        k[j] = j < lanes ? (int32_t)((uint32_t)interior_bias[c0 + j] << scale[j]) : 0;
    }
    int32_t *f = k + 4;
    const int8_t *w = filter + c0;
    /* lanes past the last channel (a tail block) have zero taps, bias and multiplier */
#define TAP(t, j)                                                                               \
    ((j) < lanes ? (int32_t)((uint32_t)(int32_t)w[(t) * channels + (j)] << scale[j]) : 0)
    if (temporal) { /* per tap (channel 0, channel 2) and (channel 1, channel 3), 2 unused */
        for (int32_t t = 0; t < p->filter_h; t++, f += 4) {
            f[0] = dw_pair(TAP(t, 0), TAP(t, 2));
            f[1] = dw_pair(TAP(t, 1), TAP(t, 3));
            f[2] = f[3] = 0;
        }
    } else if (fast3) {
        for (int32_t ky = 0; ky < 3; ky++, f += 8) {
            for (int32_t j = 0; j < 4; j++) {
                f[j] = dw_pair(TAP(3 * ky, j), TAP(3 * ky + 1, j));
                f[4 + j] = p->stride_w == 1 ? dw_pair(0, TAP(3 * ky + 2, j))
                                            : dw_pair(TAP(3 * ky + 2, j), 0);
            }
        }
    } else {
        const int32_t kw = p->filter_w;
        for (int32_t ky = 0; ky < p->filter_h; ky++) {
            const int32_t t = ky * kw;
            int32_t kx = 0;
            for (; kx + 1 < kw; kx += 2, f += 4) {
                for (int32_t j = 0; j < 4; j++) {
                    f[j] = dw_pair(TAP(t + kx, j), TAP(t + kx + 1, j));
                }
            }
            if (kx < kw) { /* an odd width's last tap, alone in its pair */
                for (int32_t j = 0; j < 4; j++) {
                    f[j] = dw_pair(TAP(t + kx, j), 0);
                }
                f += 4;
            }
        }
    }
#undef TAP
    for (int32_t j = 0; j < 4; j++, f += 3) {
        const int32_t s = j < lanes ? shifts[c0 + j] : 0;
        const int32_t right = s > 0 ? 0 : -s;
        f[0] = j < lanes ? multipliers[c0 + j] : 0;
        f[1] = (int32_t)(((uint32_t)1 << right) + ((uint32_t)p->output_offset << (right + 1)));
        f[2] = right + 1;
    }
}

/* Input pixel i of a row (src NULL: above or below the input) as SXTB16 halves: *even =
 * channels 0 and 2, *odd = 1 and 3; the zero point pair zp2 outside the input (the padding).
 * The row's width and depth come as values: read through p after the band's stores, GCC
 * reloaded them for every pixel. */
static inline void dw_widen(const int8_t *src, int32_t i, int32_t input_w, int32_t input_c,
                            int32_t lanes, int32_t zp2, int32_t *even, int32_t *odd)
{
    if ((uint32_t)i < (uint32_t)input_w) {
        const uint32_t w = dw_load_lanes(src + i * input_c, lanes);
        *even = (int32_t)__sxtb16((int32_t)w);
        *odd = dw_odd(w);
    } else {
        *even = zp2;
        *odd = zp2;
    }
}

/* PKHBT (bottom halves of a and b) and PKHTB (top halves): gcc writes them as two instructions
 * each from the C expressions. */
static inline int32_t dw_bottoms(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

static inline int32_t dw_tops(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
    return r;
}

/* The entry of pixels (a, a + 1), from their SXTB16 halves. */
static inline void dw_entry(int32_t *d, int32_t e0, int32_t o0, int32_t e1, int32_t o1)
{
    d[0] = dw_bottoms(e0, e1);
    d[1] = dw_bottoms(o0, o1);
    d[2] = dw_tops(e0, e1);
    d[3] = dw_tops(o0, o1);
}

/* A band row of n entries, entry j the pairs (padded pixel j * q, j * q + 1) of the 4 channels
 * of input row src (NULL: a padding row). With q = 1 each pixel is loaded and widened once. */
static inline __attribute__((always_inline)) void dw_fill_lanes(
    int32_t *d, const int8_t *src, int32_t n, int32_t q, const mb_depthwise_conv2d_s8_params *p,
    int32_t lanes, int32_t zp2)
{
    if (src == NULL) {
        for (int32_t j = 0; j < n; j++, d += 4) {
            d[0] = zp2;
            d[1] = zp2;
            d[2] = zp2;
            d[3] = zp2;
        }
        return;
    }
    int32_t i = -p->pad_left; /* the input pixel of padded pixel j * q */
    const int32_t input_w = p->input_w, input_c = p->input_c;
    int32_t e0, o0, e1, o1;
    if (q == 1) {
        dw_widen(src, i, input_w, input_c, lanes, zp2, &e0, &o0);
        for (int32_t j = 0; j < n; j++, d += 4) {
            i++;
            dw_widen(src, i, input_w, input_c, lanes, zp2, &e1, &o1);
            dw_entry(d, e0, o0, e1, o1);
            e0 = e1;
            o0 = o1;
        }
    } else {
        for (int32_t j = 0; j < n; j++, d += 4, i += 2) {
            dw_widen(src, i, input_w, input_c, lanes, zp2, &e0, &o0);
            dw_widen(src, i + 1, input_w, input_c, lanes, zp2, &e1, &o1);
            dw_entry(d, e0, o0, e1, o1);
        }
    }
}

/* A whole block's band row (the loads are whole words) and a tail block's (1-3 channels): two
 * functions, so the whole block's, called from one place, is compiled as before the tail
 * existed (one body with both made the 3x3 blocks ~5% slower). */
static inline __attribute__((always_inline)) void dw_fill(
    int32_t *d, const int8_t *src, int32_t n, int32_t q, const mb_depthwise_conv2d_s8_params *p,
    int32_t zp2)
{
    dw_fill_lanes(d, src, n, q, p, 4, zp2);
}

static __attribute__((noinline)) void dw_fill_tail(int32_t *d, const int8_t *src, int32_t n,
                                                   int32_t q,
                                                   const mb_depthwise_conv2d_s8_params *p,
                                                   int32_t lanes, int32_t zp2)
{
    dw_fill_lanes(d, src, n, q, p, lanes, zp2);
}

/* The taps k in [*lo, *hi) of a window starting at `start` that land inside [0, size). */
static void dw_tap_range(int32_t start, int32_t filter, int32_t size, int32_t *lo, int32_t *hi)
{
    int32_t l = start >= 0 ? 0 : -start;
    int32_t h = size - start;
    h = h < filter ? h : filter;
    h = h > 0 ? h : 0;
    *lo = l < h ? l : h;
    *hi = h;
}

/* One channel c the blocks left over, straight from the definition. */
/* (Not inlined: inside the block loop it cost the whole blocks' register allocation.) */
static __attribute__((noinline)) void dw_channel(const mb_depthwise_conv2d_s8_params *p,
                                                 const int8_t *input, const int8_t *filter,
                                                 const int32_t *bias,
                                                 const int32_t *interior_bias,
                                                 const int32_t *multipliers,
                                                 const int32_t *shifts, int8_t *output,
                                                 int32_t c)
{
    const int32_t channels = p->input_c;
    const int32_t row = p->input_w * channels;
    int8_t *out = output + c;
    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * row + c;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            int32_t ky_lo, ky_hi;
            dw_tap_range(in_y0, p->filter_h, p->input_h, &ky_lo, &ky_hi);
            for (int32_t ox = 0; ox < p->output_w; ox++, out += channels) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                int32_t kx_lo, kx_hi;
                dw_tap_range(in_x0, p->filter_w, p->input_w, &kx_lo, &kx_hi);
                const int interior = ky_lo == 0 && ky_hi == p->filter_h && kx_lo == 0 &&
                                     kx_hi == p->filter_w;
                const int32_t offset = interior ? 0 : p->input_offset;
                int32_t acc = interior ? interior_bias[c] : bias[c];
                for (int32_t ky = ky_lo; ky < ky_hi; ky++) {
                    for (int32_t kx = kx_lo; kx < kx_hi; kx++) {
                        const int32_t x = in_batch[((in_y0 + ky) * p->input_w + in_x0 + kx) *
                                                   channels];
                        const int32_t f = filter[(ky * p->filter_w + kx) * channels + c];
                        acc += f * (x + offset);
                    }
                }
                acc = mb_requantize_fast(acc, multipliers[c], shifts[c]) + p->output_offset;
                *out = (int8_t)mb_clamp_i32(acc, p->activation_min, p->activation_max);
            }
        }
    }
}

/* What every block's rows share: the band's ring of row pointers, its entries per row and
 * pixel step q, the zero point pair, and the row loop to run. */
typedef struct {
    int32_t **rows;
    int32_t entries, q, zp2;
    int fast3, clamp;
} dw_band;

/* The output rows of one block of `lanes` channels of one batch image (in and out at the
 * block's first channel of the image's first pixel). A whole block (lanes the constant 4) writes
 * its 4 bytes a pixel straight to the output; a tail block writes 4-byte pixels to `staging`
 * and copies its channels out (the row loops store whole words, which would overwrite the next
 * pixel's channels). Always inlined: with the constant the tail's checks compile out (a
 * shared body with them cost the 3x3 blocks ~5%). */
static inline __attribute__((always_inline)) void dw_block_rows(
    const mb_depthwise_conv2d_s8_params *p, dw_row3 *r, const dw_band *band,
    const int32_t *consts, const int8_t *in, int8_t *out, int32_t lanes, int8_t *staging)
{
    const int32_t channels = p->input_c, kh = p->filter_h;
    const int32_t shift = p->stride_h < kh ? p->stride_h : kh;
    int32_t **rows = band->rows;
    for (int32_t oy = 0; oy < p->output_h; oy++, out += p->output_w * channels) {
        int32_t fresh = kh; /* the last `fresh` rows need filling */
        if (oy > 0) {
            for (int32_t t = 0; t < shift; t++) {
                int32_t *first = rows[0];
                for (int32_t ky = 0; ky + 1 < kh; ky++) {
                    int32_t *next = rows[ky + 1];
                    /* opaque to GCC, which made this shift of 2-4 pointers a memmove call
                     * (about 40 instructions a row and block: 1.7% of ds_cnn) */
                    __asm__("" : "+r"(next));
                    rows[ky] = next;
                }
                rows[kh - 1] = first;
            }
            fresh = shift;
        }
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        for (int32_t ky = kh - fresh; ky < kh; ky++) {
            const int32_t iy = iy0 + ky;
            const int8_t *src = iy >= 0 && iy < p->input_h ? in + iy * p->input_w * channels
                                                           : NULL;
            if (lanes == 4) {
                dw_fill(rows[ky], src, band->entries, band->q, p, band->zp2);
            } else {
                dw_fill_tail(rows[ky], src, band->entries, band->q, p, lanes, band->zp2);
            }
        }
        int8_t *dst = lanes == 4 ? out : staging;
        if (band->fast3) {
            r->row[0] = rows[0];
            r->row[1] = rows[1];
            r->row[2] = rows[2];
            r->out = dst;
            if (band->clamp) {
                mb_depthwise_dsp_row3_clamp(r);
            } else {
                mb_depthwise_dsp_row3(r);
            }
        } else {
            dw_row_any(p, (const int32_t *const *)rows, consts, dst, r->channels);
        }
        if (lanes < 4) {
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                for (int32_t j = 0; j < lanes; j++) {
                    out[ox * channels + j] = staging[4 * ox + j];
                }
            }
        }
    }
}

/* The last 2-3 channels as a block whose missing lanes are zero (dw_block_consts), its rows
 * through the staging row (r->channels, the row loops' output step, 4 from here on). */
static __attribute__((noinline)) void dw_tail_block(
    const mb_depthwise_conv2d_s8_params *p, dw_row3 *r, const dw_band *band,
    const int8_t *input, const int8_t *filter, const int32_t *interior_bias,
    const int32_t *multipliers, const int32_t *shifts, int32_t c0, int32_t *consts,
    int8_t *staging, int8_t *output)
{
    const int32_t channels = p->input_c;
    dw_block_consts(p, filter, interior_bias, multipliers, shifts, c0, channels - c0,
                    band->fast3, 0, consts);
    r->channels = 4;
    for (int32_t b = 0; b < p->batches; b++) {
        dw_block_rows(p, r, band, consts, input + (b * p->input_h * p->input_w) * channels + c0,
                      output + b * p->output_h * p->output_w * channels + c0, channels - c0,
                      staging);
    }
}

void mb_depthwise_conv2d_s8_dsp(const mb_depthwise_conv2d_s8_params *p, const int8_t *input,
                                const int8_t *filter, const int32_t *bias,
                                const int32_t *interior_bias, const int32_t *multipliers,
                                const int32_t *shifts, int8_t *output, void *scratch)
{
    const int32_t channels = p->input_c;
    const int32_t kh = p->filter_h, kw = p->filter_w;
    const int32_t taps = kh * kw;
    const int fast3 = kh == 3 && kw == 3 && (p->stride_w == 1 || p->stride_w == 2);
    const int32_t q = fast3 && p->stride_w == 2 ? 2 : 1;
    /* entries per band row: fast3 reads the output pixel's and the next; the rest every pixel */
    const int32_t entries = fast3 ? p->output_w + 1 : (p->output_w - 1) * p->stride_w + kw;
    const int32_t zp = -p->input_offset;
    const int32_t zp2 = dw_pair(zp, zp);
    const int clamp = p->activation_min > -128 || p->activation_max < 127;
    if (p->output_w <= 0 || p->output_h <= 0) {
        return;
    }
    /* scratch: the row description, the block's consts, kh row pointers, kh band rows */
    dw_row3 *r = (dw_row3 *)scratch;
    int32_t *consts = (int32_t *)(void *)((uint8_t *)scratch + DW_HEAD_BYTES);
    int32_t **rows = (int32_t **)(void *)(consts + 4 + 4 * taps + 12);
    int32_t *band = (int32_t *)(void *)(rows + kh);
    r->channels = channels;
    r->width = p->output_w;
    r->amin4 = (uint32_t)(uint8_t)p->activation_min * 0x01010101u;
    r->amax4 = (uint32_t)(uint8_t)p->activation_max * 0x01010101u;
    r->consts = consts;
    /* rows[ky] is the band row of input row oy * stride_h - pad_top + ky: a ring, rotated by
     * stride_h rows per output row, so each input row is widened once per block. */
    for (int32_t ky = 0; ky < kh; ky++) {
        rows[ky] = band + ky * 4 * entries;
    }
    const int temporal = dw_is_temporal(p);
    dw_band band_of = {rows, entries, q, zp2, fast3, clamp};
    int32_t c0 = 0;
    for (; c0 + 4 <= channels; c0 += 4) {
        dw_block_consts(p, filter, interior_bias, multipliers, shifts, c0, 4, fast3, temporal,
                        consts);
        int8_t *out = output + c0;
        const int32_t image_out = p->output_h * p->output_w * channels;
        for (int32_t b = 0; b < p->batches; b++, out += image_out) {
            if (temporal) {
                dw_temporal_block(p, input + b * p->input_h * channels + c0, consts, out);
            } else {
                dw_block_rows(p, r, &band_of, consts,
                              input + (b * p->input_h * p->input_w) * channels + c0, out, 4, 0);
            }
        }
    }
    if (c0 == channels) {
        return;
    }
    /* The temporal tap loop loads whole words; and one channel alone costs less straight from
     * the definition than a block's band rows (3x3 stride 2: ~3,000 instructions for 16 pixels
     * against ~4,300 a block; 5x5: 4k against 12k). */
    if (temporal || channels - c0 == 1) {
        for (; c0 < channels; c0++) {
            dw_channel(p, input, filter, bias, interior_bias, multipliers, shifts, output, c0);
        }
        return;
    }
    /* A tail block's rows go to 4-byte pixels after the band, then its channels to the output */
    int8_t *staging = (int8_t *)(band + kh * 4 * ((p->output_w - 1) * p->stride_w + kw));
    dw_tail_block(p, r, &band_of, input, filter, interior_bias, multipliers, shifts, c0, consts,
                  staging, output);
}

#else
typedef int mb_depthwise_conv2d_dsp_unused;
#endif
