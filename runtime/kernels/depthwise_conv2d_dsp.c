/* DEPTHWISE_CONV_2D, Arm DSP variant "dsp" (Cortex-M4/M7/M33/M55): depth multiplier 1, no
 * dilation.
 *
 * Blocks of 4 channels are the outermost loop. For a block, the filter's taps are sign-extended
 * once into the scratch area: per tap one word with channels 0 and 2 as int16 halves (SXTB16) and
 * one with channels 1 and 3 (SXTB16 of the word rotated by 8). The input rows the current output
 * row needs are kept, the same way sign-extended, in a ring of filter_h "band" rows in the
 * scratch, padded left and right (and above and below the input) with the input zero point: every
 * input row is split once per block however many taps read it. With the zero point in the
 * padding, every output pixel is an interior one: it starts from interior_bias and sums
 * filter * input over all taps, since a padding tap adds filter * zero_point, which
 * interior_bias = bias - zero_point * sum(filter) takes back exactly; the same int32 as the
 * reference. Each tap is then LDRD (input halves), LDRD (filter halves), SMLABB/SMLATT for
 * channels 0/2 and 1/3. Channels past the last whole block (input_c % 4) take a scalar loop
 * straight from the definition.
 *
 * Requantization: (acc * 2^left * multiplier + 2^30) >> 31 is SMMULR(acc * 2^(left + 1),
 * multiplier) when acc * 2^(left + 1) fits in int32; the rounding right shift (half away from
 * zero) by `right` is (2 * hi + 2^right - (hi < 0)) >> (right + 1), also right == 0. The compiler
 * only picks this variant when |acc| * 2^left < 2^28 and right <= 28 for every channel
 * (depthwise_conv2d.py), so nothing here overflows.
 *
 * Scratch: 128 bytes of constants, 8 bytes per filter tap, 8 bytes per filter row and
 * filter_h band rows of ((output_w - 1) * stride_w + filter_w) * 8 bytes. Weights as stored. */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stddef.h>
#include <string.h>

#include "microbuild/kernels/depthwise_conv2d.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

#if defined(__GNUC__)
#define DW_INLINE static inline __attribute__((always_inline))
#define DW_NOINLINE static __attribute__((noinline))
#else
#define DW_INLINE static inline
#define DW_NOINLINE static
#endif

/* One channel's requantization constants. */
typedef struct {
    int32_t multiplier;
    int32_t left1;   /* left shift + 1 */
    int32_t half;    /* 2^right */
    int32_t right1;  /* right shift + 1 */
} dw_rq;

/* Everything one block of 4 channels needs, at the start of the scratch area (one pointer for
 * the hot loops, so the compiler keeps the accumulators in registers). */
typedef struct {
    int32_t ib[4];          /* interior_bias of the block's channels */
    dw_rq q[4];
    int32_t channels;       /* input_c: output bytes between adjacent pixels */
    int32_t zo, amin, amax;
    int32_t xstep;          /* band words between adjacent output pixels: 2 * stride_w */
    int32_t width;          /* output_w */
    int32_t kh, kw;
    const int32_t *fb;      /* per tap: channels 0|2 and 1|3 as int16 pairs */
    const int32_t **rows;   /* the band rows of the current output row's taps, kh of them */
} dw_ctx;

#define DW_CTX_BYTES 128 /* sizeof(dw_ctx) rounded up; depthwise_conv2d.py reserves it */

static inline uint32_t dw_load32(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

/* Two consecutive words (8-byte aligned, in the scratch) in one LDRD at `p` plus the constant
 * byte offset `off`: gcc tuned for the Cortex-M7 would otherwise issue two LDRs. The asm has no
 * memory operand (one makes gcc materialise every address): it is only used in functions that
 * never write what it reads, which their callers fill before calling them (not inlined). */
#define DW_LD2(p, off, a, b)                                                                       \
    __asm__("ldrd %0, %1, [%2, %3]" : "=&r"(a), "=&r"(b) : "r"(p), "i"(off))

static inline int32_t dw_even(uint32_t v)
{
    return (int32_t)__sxtb16((int32_t)v);
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

DW_INLINE int32_t dw_requantize(int32_t acc, const dw_rq *q)
{
    int32_t multiplier, left1, half, right1;
    DW_LD2(q, 0, multiplier, left1);
    DW_LD2(q, 8, half, right1);
    const int32_t hi = dw_smmulr((int32_t)((uint32_t)acc << left1), multiplier);
    const int32_t t = (int32_t)(((uint32_t)hi << 1) + (uint32_t)half - ((uint32_t)hi >> 31));
    return t >> right1;
}

DW_INLINE void dw_store4(const dw_ctx *k, int8_t *out, int32_t a0, int32_t a1, int32_t a2,
                         int32_t a3, int clamp)
{
    int32_t v0 = __ssat(dw_requantize(a0, &k->q[0]) + k->zo, 8);
    int32_t v1 = __ssat(dw_requantize(a1, &k->q[1]) + k->zo, 8);
    int32_t v2 = __ssat(dw_requantize(a2, &k->q[2]) + k->zo, 8);
    int32_t v3 = __ssat(dw_requantize(a3, &k->q[3]) + k->zo, 8);
    if (clamp) {
        v0 = mb_clamp_i32(v0, k->amin, k->amax);
        v1 = mb_clamp_i32(v1, k->amin, k->amax);
        v2 = mb_clamp_i32(v2, k->amin, k->amax);
        v3 = mb_clamp_i32(v3, k->amin, k->amax);
    }
    out[0] = (int8_t)v0;
    out[1] = (int8_t)v1;
    out[2] = (int8_t)v2;
    out[3] = (int8_t)v3;
}

/* acc += the 4 products of one tap: band pixel x (even|odd halves) times filter tap f. */
#define DW_TAP(x, xo, f, fo)                                                                              \
    do {                                                                                           \
        int32_t xe_, xo_, fe_, fo_;                                                                \
        DW_LD2(x, 4 * (xo), xe_, xo_);                                                             \
        DW_LD2(f, 4 * (fo), fe_, fo_);                                                             \
        a0 = __smlabb(xe_, fe_, a0);                                                               \
        a2 = __smlatt(xe_, fe_, a2);                                                               \
        a1 = __smlabb(xo_, fo_, a1);                                                               \
        a3 = __smlatt(xo_, fo_, a3);                                                               \
    } while (0)

/* One output row of a 3x3 filter: 6 instructions per tap (LDRD, LDRD, 4 multiply-adds). */
DW_INLINE void dw_row_3x3(const dw_ctx *k, int8_t *out, int clamp)
{
    const int32_t *x0 = k->rows[0], *x1 = k->rows[1], *x2 = k->rows[2];
    const int32_t *fb = k->fb;
    const int32_t xstep = k->xstep;
    const int32_t channels = k->channels;
    for (int32_t n = k->width; n > 0; n--, x0 += xstep, x1 += xstep, x2 += xstep,
                 out += channels) {
        int32_t a0, a1, a2, a3;
        DW_LD2(k->ib, 0, a0, a1);
        DW_LD2(k->ib, 8, a2, a3);
        DW_TAP(x0, 0, fb, 0);
        DW_TAP(x0, 2, fb, 2);
        DW_TAP(x0, 4, fb, 4);
        DW_TAP(x1, 0, fb, 6);
        DW_TAP(x1, 2, fb, 8);
        DW_TAP(x1, 4, fb, 10);
        DW_TAP(x2, 0, fb, 12);
        DW_TAP(x2, 2, fb, 14);
        DW_TAP(x2, 4, fb, 16);
        dw_store4(k, out, a0, a1, a2, a3, clamp);
    }
}

DW_NOINLINE void dw_row_3x3_noclamp(const dw_ctx *k, int8_t *out)
{
    dw_row_3x3(k, out, 0);
}

DW_NOINLINE void dw_row_3x3_clamp(const dw_ctx *k, int8_t *out)
{
    dw_row_3x3(k, out, 1);
}

/* One output row, any filter size. */
DW_NOINLINE void dw_row_any(const dw_ctx *k, int8_t *out)
{
    for (int32_t ox = 0; ox < k->width; ox++, out += k->channels) {
        int32_t a0 = k->ib[0], a1 = k->ib[1], a2 = k->ib[2], a3 = k->ib[3];
        const int32_t *f = k->fb;
        for (int32_t ky = 0; ky < k->kh; ky++) {
            const int32_t *x = k->rows[ky] + ox * k->xstep;
            for (int32_t kx = 0; kx < k->kw; kx++, x += 2, f += 2) {
                DW_TAP(x, 0, f, 0);
            }
        }
        dw_store4(k, out, a0, a1, a2, a3, 1);
    }
}

/* Band row: `n` padded pixels (the input row `src`'s block of 4 channels, pixels `channels`
 * bytes apart, between `pad_left` and `pad_left + input_w` pixels; the input zero point around
 * it), each as its even and odd channels sign-extended. src NULL: all zero point. */
static void dw_fill(int32_t *d, const int8_t *src, int32_t n, int32_t pad_left, int32_t input_w,
                    int32_t channels, int32_t zp2)
{
    int32_t j = 0;
    if (src != NULL) {
        int32_t lo = pad_left < n ? pad_left : n;
        int32_t hi = pad_left + input_w < n ? pad_left + input_w : n;
        for (; j < lo; j++, d += 2) {
            d[0] = zp2;
            d[1] = zp2;
        }
        src += (j - pad_left) * channels;
        for (; j < hi; j++, d += 2, src += channels) {
            const uint32_t w = dw_load32(src);
            d[0] = dw_even(w);
            d[1] = dw_odd(w);
        }
    }
    for (; j < n; j++, d += 2) {
        d[0] = zp2;
        d[1] = zp2;
    }
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
static void dw_channel(const mb_depthwise_conv2d_s8_params *p, const int8_t *input,
                       const int8_t *filter, const int32_t *bias, const int32_t *interior_bias,
                       const int32_t *multipliers, const int32_t *shifts, int8_t *output,
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

void mb_depthwise_conv2d_s8_dsp(const mb_depthwise_conv2d_s8_params *p, const int8_t *input,
                                const int8_t *filter, const int32_t *bias,
                                const int32_t *interior_bias, const int32_t *multipliers,
                                const int32_t *shifts, int8_t *output, void *scratch)
{
    const int32_t channels = p->input_c;
    const int32_t kh = p->filter_h, kw = p->filter_w;
    const int32_t taps = kh * kw;
    const int32_t padded_w = (p->output_w - 1) * p->stride_w + kw; /* band pixels per row */
    const int32_t zp = -p->input_offset;
    const int32_t zp2 = (int32_t)(((uint32_t)zp & 0xffffu) | ((uint32_t)zp << 16));
    const int fast3 = kh == 3 && kw == 3;
    const int clamp = p->activation_min > -128 || p->activation_max < 127;
    /* scratch: the context, the block's taps, kh row pointers, kh row ids, kh band rows */
    dw_ctx *k = (dw_ctx *)scratch;
    int32_t *fb = (int32_t *)((uint8_t *)scratch + DW_CTX_BYTES);
    const int32_t **rows = (const int32_t **)(void *)(fb + 2 * taps);
    int32_t *ids = (int32_t *)(void *)(rows + kh);
    int32_t *band = ids + kh;
    k->channels = channels;
    k->zo = p->output_offset;
    k->amin = p->activation_min;
    k->amax = p->activation_max;
    k->xstep = 2 * p->stride_w;
    k->width = p->output_w;
    k->kh = kh;
    k->kw = kw;
    k->fb = fb;
    k->rows = rows;
    int32_t c0 = 0;
    for (; c0 + 4 <= channels; c0 += 4) {
        for (int32_t t = 0; t < taps; t++) {
            const uint32_t w = dw_load32(filter + t * channels + c0);
            fb[2 * t] = dw_even(w);
            fb[2 * t + 1] = dw_odd(w);
        }
        for (int32_t j = 0; j < 4; j++) {
            const int32_t s = shifts[c0 + j];
            const int32_t right = s > 0 ? 0 : -s;
            k->ib[j] = interior_bias[c0 + j];
            k->q[j].multiplier = multipliers[c0 + j];
            k->q[j].left1 = (s > 0 ? s : 0) + 1;
            k->q[j].half = (int32_t)1 << right;
            k->q[j].right1 = right + 1;
        }
        int8_t *out = output + c0;
        for (int32_t b = 0; b < p->batches; b++) {
            const int8_t *in_batch = input + (b * p->input_h * p->input_w) * channels + c0;
            for (int32_t i = 0; i < kh; i++) {
                ids[i] = INT32_MIN;
            }
            for (int32_t oy = 0; oy < p->output_h; oy++, out += p->output_w * channels) {
                for (int32_t ky = 0; ky < kh; ky++) {
                    const int32_t iy = oy * p->stride_h - p->pad_top + ky;
                    const int32_t slot = ((iy % kh) + kh) % kh;
                    int32_t *d = band + slot * 2 * padded_w;
                    if (ids[slot] != iy) {
                        const int8_t *src = iy >= 0 && iy < p->input_h
                                                ? in_batch + iy * p->input_w * channels
                                                : NULL;
                        dw_fill(d, src, padded_w, p->pad_left, p->input_w, channels, zp2);
                        ids[slot] = iy;
                    }
                    rows[ky] = d;
                }
                if (fast3 && !clamp) {
                    dw_row_3x3_noclamp(k, out);
                } else if (fast3) {
                    dw_row_3x3_clamp(k, out);
                } else {
                    dw_row_any(k, out);
                }
            }
        }
    }
    for (; c0 < channels; c0++) {
        dw_channel(p, input, filter, bias, interior_bias, multipliers, shifts, output, c0);
    }
}

#else
typedef int mb_depthwise_conv2d_dsp_unused;
#endif
