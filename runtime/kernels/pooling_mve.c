/* AVERAGE_POOL_2D, Helium variant "mve" (Cortex-M55/M85): widening loads (VLDRB.S16: 8 int8
 * channels to 8 int16 lanes) and 16-bit vector adds, 32 channels per pass over the window.
 * (MAX_POOL_2D's "mve" is at the end of the file.)
 *
 * The 16-bit lanes wrap modulo 2^16, harmless while the true sum fits int16: a sum of at most 256
 * int8 values does. A window of at most 256 positions (every pooling layer of the models we know)
 * is summed in its lanes and divided there: TFLM's rounding division, (acc +- count / 2) / count
 * truncated, is sign(acc) * floor((|acc| + count / 2) / count), and the floor of u / count for
 * u < 2^24 is the high word of u * (0xFFFFFFFF / count + 1) (count 1: of (u + 1) * 0xFFFFFFFF),
 * exact because u * count < 2^32 (|acc| + count / 2 <= 128.5 * 256 here). A larger window moves
 * the lanes to int32 totals every 256 positions, which are the reference's integer sums, and
 * divides those per channel as the reference does. The last channels % 8 use tail predication
 * (VCTP): masked lanes are neither read nor added nor stored. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/pooling.h"
#include "microbuild/quant.h"

#define MB_MVE_RUN 256

static int8_t mve_average(const mb_pool2d_s8_params *p, int32_t acc, int32_t count)
{
    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    return (int8_t)mb_clamp_i32(acc, p->activation_min, p->activation_max);
}

static inline void mve_flush(int32_t *total, int16x8_t acc, int32_t n)
{
    int16_t lanes[8];
    vst1q_s16(lanes, acc);
    for (int32_t j = 0; j < n; j++) {
        total[j] += lanes[j];
    }
}

/* Sums n (1..32) channels over rows [y0, y1) x columns [x0, x1). */
static void mve_sum(const mb_pool2d_s8_params *p, const int8_t *in, int32_t y0, int32_t y1,
                    int32_t x0, int32_t x1, int32_t n, int32_t *total)
{
    const int32_t c = p->channels;
    const int16x8_t zero = vdupq_n_s16(0);
    int16x8_t a0 = zero, a1 = zero, a2 = zero, a3 = zero;
    int32_t room = MB_MVE_RUN;
    for (int32_t j = 0; j < n; j++) {
        total[j] = 0;
    }
    for (int32_t y = y0; y < y1; y++) {
        const int8_t *pos = in + (y * p->input_w + x0) * c;
        int32_t left = x1 - x0;
        while (left > 0) {
            const int32_t run = left < room ? left : room;
            if (n == 32) {
                for (int32_t i = 0; i < run; i++, pos += c) {
                    a0 = vaddq_s16(a0, vldrbq_s16(pos));
                    a1 = vaddq_s16(a1, vldrbq_s16(pos + 8));
                    a2 = vaddq_s16(a2, vldrbq_s16(pos + 16));
                    a3 = vaddq_s16(a3, vldrbq_s16(pos + 24));
                }
            } else {
                const mve_pred16_t p0 = vctp16q((uint32_t)n);
                const mve_pred16_t p1 = vctp16q((uint32_t)(n > 8 ? n - 8 : 0));
                const mve_pred16_t p2 = vctp16q((uint32_t)(n > 16 ? n - 16 : 0));
                const mve_pred16_t p3 = vctp16q((uint32_t)(n > 24 ? n - 24 : 0));
                for (int32_t i = 0; i < run; i++, pos += c) {
                    a0 = vaddq_s16(a0, vldrbq_z_s16(pos, p0));
                    a1 = vaddq_s16(a1, vldrbq_z_s16(pos + 8, p1));
                    a2 = vaddq_s16(a2, vldrbq_z_s16(pos + 16, p2));
                    a3 = vaddq_s16(a3, vldrbq_z_s16(pos + 24, p3));
                }
            }
            left -= run;
            room -= run;
            if (room == 0 || (left == 0 && y + 1 == y1)) {
                mve_flush(total, a0, n < 8 ? n : 8);
                if (n > 8) {
                    mve_flush(total + 8, a1, n < 16 ? n - 8 : 8);
                }
                if (n > 16) {
                    mve_flush(total + 16, a2, n < 24 ? n - 16 : 8);
                }
                if (n > 24) {
                    mve_flush(total + 24, a3, n - 24);
                }
                a0 = a1 = a2 = a3 = zero;
                room = MB_MVE_RUN;
            }
        }
    }
}

/* The division of a window's sums by its count, on 4 int32 lanes (see the top of the file). */
typedef struct {
    uint32_t reciprocal; /* 0xFFFFFFFF / count + 1, or 0xFFFFFFFF for a count of 1 */
    int32_t round;       /* count / 2, or 1 for a count of 1 */
    int32x4_t low, high; /* the activation's clamp */
} mve_divide;

static inline int32x4_t mve_average4(const mve_divide *d, int32x4_t acc)
{
    const uint32x4_t u = vreinterpretq_u32_s32(vaddq_n_s32(vabsq_s32(acc), d->round));
    const int32x4_t q = vreinterpretq_s32_u32(vmulhq_u32(u, vdupq_n_u32(d->reciprocal)));
    const int32x4_t r = vpselq_s32(vnegq_s32(q), q, vcmpltq_n_s32(acc, 0));
    return vminq_s32(vmaxq_s32(r, d->low), d->high);
}

/* 8 channels' int16 sums divided, clamped and stored as int8 (the first n of them). */
static inline void mve_average8(const mve_divide *d, int16x8_t sum, int8_t *out, int32_t n)
{
    const int32x4_t even = mve_average4(d, vmovlbq_s16(sum));
    const int32x4_t odd = mve_average4(d, vmovltq_s16(sum));
    const int16x8_t r = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), even), odd);
    vstrbq_p_s16(out, r, vctp16q((uint32_t)n));
}

/* Averages n (1..32) channels over rows [y0, y1) x columns [x0, x1), at most 256 positions. */
static void mve_small_window(const mb_pool2d_s8_params *p, const int8_t *in, int32_t y0,
                             int32_t y1, int32_t x0, int32_t x1, int32_t n,
                             const mve_divide *d, int8_t *out)
{
    const int32_t c = p->channels, w = x1 - x0;
    const int16x8_t zero = vdupq_n_s16(0);
    int16x8_t a0 = zero, a1 = zero, a2 = zero, a3 = zero;
    const mve_pred16_t p0 = vctp16q((uint32_t)n);
    const mve_pred16_t p1 = vctp16q((uint32_t)(n > 8 ? n - 8 : 0));
    const mve_pred16_t p2 = vctp16q((uint32_t)(n > 16 ? n - 16 : 0));
    const mve_pred16_t p3 = vctp16q((uint32_t)(n > 24 ? n - 24 : 0));
    for (int32_t y = y0; y < y1; y++) {
        const int8_t *pos = in + (y * p->input_w + x0) * c;
        for (int32_t i = 0; i < w; i++, pos += c) {
            a0 = vaddq_s16(a0, vldrbq_z_s16(pos, p0));
            a1 = vaddq_s16(a1, vldrbq_z_s16(pos + 8, p1));
            a2 = vaddq_s16(a2, vldrbq_z_s16(pos + 16, p2));
            a3 = vaddq_s16(a3, vldrbq_z_s16(pos + 24, p3));
        }
    }
    mve_average8(d, a0, out, n);
    if (n > 8) {
        mve_average8(d, a1, out + 8, n - 8);
    }
    if (n > 16) {
        mve_average8(d, a2, out + 16, n - 16);
    }
    if (n > 24) {
        mve_average8(d, a3, out + 24, n - 24);
    }
}

void mb_avgpool2d_s8_mve(const mb_pool2d_s8_params *p, const int8_t *input, int8_t *output,
                         void *scratch)
{
    const int32_t channels = p->channels;
    int8_t *out = output;
    (void)scratch;
    mve_divide d;
    d.reciprocal = 0; /* set at the first window (divisor 0 differs from every count) */
    d.round = 0;
    d.low = vdupq_n_s32(p->activation_min);
    d.high = vdupq_n_s32(p->activation_max);
    int32_t divisor = 0;
    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * p->input_w * channels;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            const int32_t y0 = in_y0 < 0 ? 0 : in_y0;
            const int32_t y1 = in_y0 + p->filter_h < p->input_h ? in_y0 + p->filter_h : p->input_h;
            for (int32_t ox = 0; ox < p->output_w; ox++, out += channels) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                const int32_t x0 = in_x0 < 0 ? 0 : in_x0;
                const int32_t x1 =
                    in_x0 + p->filter_w < p->input_w ? in_x0 + p->filter_w : p->input_w;
                /* The compiler rejects shapes where a window misses the input entirely. */
                const int32_t count = (y1 - y0) * (x1 - x0);
                if (count <= MB_MVE_RUN) {
                    if (count != divisor) { /* the clipped windows' counts change at borders */
                        divisor = count;
                        d.reciprocal = count == 1 ? 0xFFFFFFFFu : 0xFFFFFFFFu / (uint32_t)count + 1;
                        d.round = count == 1 ? 1 : count / 2;
                    }
                    for (int32_t c0 = 0; c0 < channels; c0 += 32) {
                        mve_small_window(p, in_batch + c0, y0, y1, x0, x1,
                                         channels - c0 < 32 ? channels - c0 : 32, &d, out + c0);
                    }
                    continue;
                }
                for (int32_t c0 = 0; c0 < channels; c0 += 32) {
                    const int32_t n = channels - c0 < 32 ? channels - c0 : 32;
                    int32_t total[32];
                    mve_sum(p, in_batch + c0, y0, y1, x0, x1, n, total);
                    for (int32_t j = 0; j < n; j++) {
                        out[c0 + j] = mve_average(p, total[j], count);
                    }
                }
            }
        }
    }
}

/* MAX_POOL_2D, Helium variant "mve": 16 channels per vector. Per output pixel and block of 16
 * channels, one VLDRB and one VMAX.S8 per window position, the clamp to the activation range
 * (VMAX, VMIN) and one VSTRB: the reference takes each channel's maximum one value at a time.
 * A channel count that is not a multiple of 16 ends with a tail-predicated block (VCTP8: its
 * masked lanes are read as 0 and never stored). Exact: a maximum is a maximum, in any order.
 * Like the reference, a block's window is read before that block of the pixel is written. */
static inline void max_block(const mb_pool2d_s8_params *p, const int8_t *in, int32_t y0,
                             int32_t y1, int32_t x0, int32_t x1, int8x16_t lo, int8x16_t hi,
                             int8_t *out, mve_pred16_t pred, const int whole)
{
    const int32_t c = p->channels;
    int8x16_t m = vdupq_n_s8(INT8_MIN);
    for (int32_t y = y0; y < y1; y++) {
        const int8_t *pos = in + (y * p->input_w + x0) * c;
        for (int32_t x = x0; x < x1; x++, pos += c) {
            m = vmaxq_s8(m, whole ? vldrbq_s8(pos) : vldrbq_z_s8(pos, pred));
        }
    }
    m = vminq_s8(vmaxq_s8(m, lo), hi);
    if (whole) {
        vstrbq_s8(out, m);
    } else {
        vstrbq_p_s8(out, m, pred);
    }
}

void mb_maxpool2d_s8_mve(const mb_pool2d_s8_params *p, const int8_t *input, int8_t *output,
                         void *scratch)
{
    const int32_t channels = p->channels;
    const int32_t whole = channels & ~15;
    const mve_pred16_t tail = vctp8q((uint32_t)(channels - whole));
    const int8x16_t lo = vdupq_n_s8((int8_t)p->activation_min);
    const int8x16_t hi = vdupq_n_s8((int8_t)p->activation_max);
    int8_t *out = output;
    (void)scratch;
    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * p->input_w * channels;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            const int32_t y0 = in_y0 < 0 ? 0 : in_y0;
            const int32_t y1 = in_y0 + p->filter_h < p->input_h ? in_y0 + p->filter_h : p->input_h;
            for (int32_t ox = 0; ox < p->output_w; ox++, out += channels) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                const int32_t x0 = in_x0 < 0 ? 0 : in_x0;
                const int32_t x1 =
                    in_x0 + p->filter_w < p->input_w ? in_x0 + p->filter_w : p->input_w;
                for (int32_t c0 = 0; c0 < whole; c0 += 16) {
                    max_block(p, in_batch + c0, y0, y1, x0, x1, lo, hi, out + c0, tail, 1);
                }
                if (whole < channels) {
                    max_block(p, in_batch + whole, y0, y1, x0, x1, lo, hi, out + whole, tail, 0);
                }
            }
        }
    }
}

#else
typedef int mb_pooling_mve_unused;
#endif
