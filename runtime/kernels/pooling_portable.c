/* AVERAGE_POOL_2D, portable C variant "swar": sums four channels per 32-bit word (SIMD within a
 * register).
 *
 * One aligned 32-bit load brings 4 channels of one window position. XOR 0x80 per byte turns each
 * int8 x into the unsigned x + 128 (0..255); masking with 0x00FF00FF keeps bytes 0 and 2 as two
 * 16-bit lanes, shifting right by 8 first keeps bytes 1 and 3. Lanes of at most 256 such values
 * cannot carry into each other (256 * 255 < 65536), so every 256 window positions the lanes are
 * moved to int32 totals. The sum of the int8 values is then total - 128 * count: the reference's
 * integer sum exactly; the rounding division is the reference's.
 *
 * Needs the input 4-byte aligned and channels % 4 == 0 (every position's channels then start on
 * a word); otherwise it runs the reference kernel. So do targets with a vector unit (SSE2, NEON):
 * their compilers vectorize the reference's 16-lane loop, which beats 4 lanes per word there. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/pooling.h"
#include "microbuild/quant.h"

/* Window positions whose unsigned bytes fit a 16-bit lane. */
#define MB_SWAR_RUN 256

static int8_t swar_average(const mb_pool2d_s8_params *p, int32_t acc, int32_t count)
{
    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    return (int8_t)mb_clamp_i32(acc, p->activation_min, p->activation_max);
}

static inline uint32_t swar_load(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, __builtin_assume_aligned(p, 4), 4);
    return v ^ 0x80808080u;
}

/* Sums `words` (1 or 2) words of channels over the window rows [y0, y1) x columns [x0, x1). */
static void swar_sum(const mb_pool2d_s8_params *p, const int8_t *in, int32_t y0, int32_t y1,
                     int32_t x0, int32_t x1, int32_t words, int32_t *total)
{
    const uint32_t mask = 0x00FF00FFu;
    const int32_t c = p->channels;
    uint32_t e0 = 0, o0 = 0, e1 = 0, o1 = 0;
    int32_t room = MB_SWAR_RUN;
    for (int32_t j = 0; j < 4 * words; j++) {
        total[j] = 0;
    }
    for (int32_t y = y0; y < y1; y++) {
        const int8_t *pos = in + (y * p->input_w + x0) * c;
        int32_t left = x1 - x0;
        while (left > 0) {
            const int32_t run = left < room ? left : room;
            if (words == 2) {
                for (int32_t i = 0; i < run; i++, pos += c) {
                    const uint32_t w0 = swar_load(pos);
                    const uint32_t w1 = swar_load(pos + 4);
                    e0 += w0 & mask;
                    o0 += (w0 >> 8) & mask;
                    e1 += w1 & mask;
                    o1 += (w1 >> 8) & mask;
                }
            } else {
                for (int32_t i = 0; i < run; i++, pos += c) {
                    const uint32_t w0 = swar_load(pos);
                    e0 += w0 & mask;
                    o0 += (w0 >> 8) & mask;
                }
            }
            left -= run;
            room -= run;
            if (room == 0 || (left == 0 && y + 1 == y1)) {
                total[0] += (int32_t)(e0 & 0xFFFFu);
                total[1] += (int32_t)(o0 & 0xFFFFu);
                total[2] += (int32_t)(e0 >> 16);
                total[3] += (int32_t)(o0 >> 16);
                if (words == 2) {
                    total[4] += (int32_t)(e1 & 0xFFFFu);
                    total[5] += (int32_t)(o1 & 0xFFFFu);
                    total[6] += (int32_t)(e1 >> 16);
                    total[7] += (int32_t)(o1 >> 16);
                }
                e0 = o0 = e1 = o1 = 0;
                room = MB_SWAR_RUN;
            }
        }
    }
}

void mb_avgpool2d_s8_swar(const mb_pool2d_s8_params *p, const int8_t *input, int8_t *output,
                          void *scratch)
{
    (void)scratch;
#if defined(__SSE2__) || defined(__ARM_NEON)
    if (1) {
#else
    if (((uintptr_t)input & 3u) != 0 || (p->channels & 3) != 0) {
#endif
        mb_avgpool2d_s8(p, input, output);
        return;
    }
    int8_t *out = output;
    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *in_batch = input + b * p->input_h * p->input_w * p->channels;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            const int32_t y0 = in_y0 < 0 ? 0 : in_y0;
            const int32_t y1 = in_y0 + p->filter_h < p->input_h ? in_y0 + p->filter_h : p->input_h;
            for (int32_t ox = 0; ox < p->output_w; ox++, out += p->channels) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                const int32_t x0 = in_x0 < 0 ? 0 : in_x0;
                const int32_t x1 =
                    in_x0 + p->filter_w < p->input_w ? in_x0 + p->filter_w : p->input_w;
                /* The compiler rejects shapes where a window misses the input entirely. */
                const int32_t count = (y1 - y0) * (x1 - x0);
                const int32_t bias = 128 * count;
                for (int32_t c0 = 0; c0 < p->channels; c0 += 8) {
                    const int32_t words = p->channels - c0 >= 8 ? 2 : 1;
                    int32_t total[8];
                    swar_sum(p, in_batch + c0, y0, y1, x0, x1, words, total);
                    for (int32_t j = 0; j < 4 * words; j++) {
                        out[c0 + j] = swar_average(p, total[j] - bias, count);
                    }
                }
            }
        }
    }
}
