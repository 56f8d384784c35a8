/* AVERAGE_POOL_2D, Arm DSP variant "dsp" (Cortex-M4/M7/M33/M55): SXTAB16 sums four channels per
 * 32-bit load in two instructions.
 *
 * SXTAB16 adds the sign-extended bytes 0 and 2 of a word to the two 16-bit halves of an
 * accumulator; with ROR #8 it adds bytes 1 and 3. The halves wrap modulo 2^16, which is harmless
 * as long as the true sum fits int16: a sum of at most 256 int8 values does (-32768..32512). So
 * every 256 window positions the halves are moved to int32 totals; the total is then the
 * reference's integer sum exactly, and the rounding division is the reference's. 16 channels are
 * summed per pass over the window, then 4; the last channels % 4 one by one. A window of at most
 * 256 positions (every pooling layer of the models we know) needs no int32 totals: each half is
 * divided straight from the accumulators (dsp_small_window). */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <string.h>

#include "microbuild/kernels/pooling.h"
#include "microbuild/quant.h"

#define MB_DSP_RUN 256

static int8_t dsp_average(const mb_pool2d_s8_params *p, int32_t acc, int32_t count)
{
    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    return (int8_t)mb_clamp_i32(acc, p->activation_min, p->activation_max);
}

static inline int32_t dsp_load(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

/* acc + sign-extended bytes 1 and 3 of v, per 16-bit half. */
static inline int32_t dsp_add_odd(int32_t acc, int32_t v)
{
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(v));
    return r;
}

/* 16 channels' sums: channels 4k, 4k + 2 in the halves of e[k], 4k + 1, 4k + 3 in o[k]. */
typedef struct {
    int32_t e0, o0, e1, o1, e2, o2, e3, o3;
} dsp_sums16;

static inline __attribute__((always_inline)) void dsp_add16(dsp_sums16 *a, const int8_t *pos)
{
    const int32_t w0 = dsp_load(pos);
    const int32_t w1 = dsp_load(pos + 4);
    const int32_t w2 = dsp_load(pos + 8);
    const int32_t w3 = dsp_load(pos + 12);
    a->e0 = __sxtab16(a->e0, w0);
    a->o0 = dsp_add_odd(a->o0, w0);
    a->e1 = __sxtab16(a->e1, w1);
    a->o1 = dsp_add_odd(a->o1, w1);
    a->e2 = __sxtab16(a->e2, w2);
    a->o2 = dsp_add_odd(a->o2, w2);
    a->e3 = __sxtab16(a->e3, w3);
    a->o3 = dsp_add_odd(a->o3, w3);
}

static inline void dsp_flush(int32_t *total, int32_t even, int32_t odd)
{
    total[0] += (int16_t)(even & 0xFFFF);
    total[1] += (int16_t)(odd & 0xFFFF);
    total[2] += even >> 16;
    total[3] += odd >> 16;
}

/* Sums 4 * words channels (words: 4 or 1) over rows [y0, y1) x columns [x0, x1). */
static void dsp_sum(const mb_pool2d_s8_params *p, const int8_t *in, int32_t y0, int32_t y1,
                    int32_t x0, int32_t x1, int32_t words, int32_t *total)
{
    const int32_t c = p->channels;
    dsp_sums16 a = {0, 0, 0, 0, 0, 0, 0, 0};
    int32_t room = MB_DSP_RUN;
    for (int32_t j = 0; j < 4 * words; j++) {
        total[j] = 0;
    }
    for (int32_t y = y0; y < y1; y++) {
        const int8_t *pos = in + (y * p->input_w + x0) * c;
        int32_t left = x1 - x0;
        while (left > 0) {
            const int32_t run = left < room ? left : room;
            if (words == 4) {
                for (int32_t i = 0; i < run; i++, pos += c) {
                    dsp_add16(&a, pos);
                }
            } else {
                for (int32_t i = 0; i < run; i++, pos += c) {
                    const int32_t w0 = dsp_load(pos);
                    a.e0 = __sxtab16(a.e0, w0);
                    a.o0 = dsp_add_odd(a.o0, w0);
                }
            }
            left -= run;
            room -= run;
            if (room == 0 || (left == 0 && y + 1 == y1)) {
                dsp_flush(total, a.e0, a.o0);
                if (words == 4) {
                    dsp_flush(total + 4, a.e1, a.o1);
                    dsp_flush(total + 8, a.e2, a.o2);
                    dsp_flush(total + 12, a.e3, a.o3);
                }
                a = (dsp_sums16){0, 0, 0, 0, 0, 0, 0, 0};
                room = MB_DSP_RUN;
            }
        }
    }
}

/* TFLM's (acc +- count / 2) / count, the sign of the rounding term taken from acc without a
 * branch (acc 0 adds +count / 2, which truncates to 0 as -count / 2 would), then the clamp. */
static inline int8_t dsp_divide(int32_t acc, int32_t half, int32_t count, int32_t low,
                                int32_t high)
{
    const int32_t sign = acc >> 31;
    int32_t q = (acc + ((half ^ sign) - sign)) / count;
    q = q < low ? low : q;
    return (int8_t)(q > high ? high : q);
}

/* The 4 channels of an (even, odd) pair of accumulators, divided and stored. */
static inline void dsp_store4(int8_t *out, int32_t even, int32_t odd, int32_t half, int32_t count,
                              int32_t low, int32_t high)
{
    out[0] = dsp_divide((int16_t)(even & 0xFFFF), half, count, low, high);
    out[1] = dsp_divide((int16_t)(odd & 0xFFFF), half, count, low, high);
    out[2] = dsp_divide(even >> 16, half, count, low, high);
    out[3] = dsp_divide(odd >> 16, half, count, low, high);
}

/* A window of at most 256 positions, rows [y0, y1) x columns [x0, x1): every channel's average,
 * 16 channels per pass, then 4, then one by one. */
static void dsp_small_window(const mb_pool2d_s8_params *p, const int8_t *in, int32_t y0,
                             int32_t y1, int32_t x0, int32_t x1, int8_t *out)
{
    const int32_t c = p->channels, w = x1 - x0, count = (y1 - y0) * w, half = count / 2;
    const int32_t low = p->activation_min, high = p->activation_max;
    int32_t c0 = 0;
    for (; c0 + 16 <= c; c0 += 16) {
        dsp_sums16 a = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int32_t y = y0; y < y1; y++) {
            const int8_t *pos = in + (y * p->input_w + x0) * c + c0;
            for (int32_t i = 0; i < w; i++, pos += c) {
                dsp_add16(&a, pos);
            }
        }
        dsp_store4(out + c0, a.e0, a.o0, half, count, low, high);
        dsp_store4(out + c0 + 4, a.e1, a.o1, half, count, low, high);
        dsp_store4(out + c0 + 8, a.e2, a.o2, half, count, low, high);
        dsp_store4(out + c0 + 12, a.e3, a.o3, half, count, low, high);
    }
    for (; c0 + 4 <= c; c0 += 4) {
        int32_t e0 = 0, o0 = 0;
        for (int32_t y = y0; y < y1; y++) {
            const int8_t *pos = in + (y * p->input_w + x0) * c + c0;
            for (int32_t i = 0; i < w; i++, pos += c) {
                const int32_t w0 = dsp_load(pos);
                e0 = __sxtab16(e0, w0);
                o0 = dsp_add_odd(o0, w0);
            }
        }
        dsp_store4(out + c0, e0, o0, half, count, low, high);
    }
    for (; c0 < c; c0++) {
        int32_t acc = 0;
        for (int32_t y = y0; y < y1; y++) {
            const int8_t *pos = in + (y * p->input_w + x0) * c + c0;
            for (int32_t i = 0; i < w; i++, pos += c) {
                acc += *pos;
            }
        }
        out[c0] = dsp_divide(acc, half, count, low, high);
    }
}

void mb_avgpool2d_s8_dsp(const mb_pool2d_s8_params *p, const int8_t *input, int8_t *output,
                         void *scratch)
{
    const int32_t channels = p->channels;
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
                /* The compiler rejects shapes where a window misses the input entirely. */
                const int32_t count = (y1 - y0) * (x1 - x0);
                if (count <= MB_DSP_RUN) {
                    dsp_small_window(p, in_batch, y0, y1, x0, x1, out);
                    continue;
                }
                int32_t c0 = 0;
                for (; c0 + 4 <= channels;) {
                    const int32_t words = channels - c0 >= 16 ? 4 : 1;
                    int32_t total[16];
                    dsp_sum(p, in_batch + c0, y0, y1, x0, x1, words, total);
                    for (int32_t j = 0; j < 4 * words; j++) {
                        out[c0 + j] = dsp_average(p, total[j], count);
                    }
                    c0 += 4 * words;
                }
                for (; c0 < channels; c0++) {
                    int32_t acc = 0;
                    for (int32_t y = y0; y < y1; y++) {
                        const int8_t *pos = in_batch + (y * p->input_w + x0) * channels + c0;
                        for (int32_t x = x0; x < x1; x++, pos += channels) {
                            acc += *pos;
                        }
                    }
                    out[c0] = dsp_average(p, acc, count);
                }
            }
        }
    }
}

#else
typedef int mb_pooling_dsp_unused;
#endif
