/* AVERAGE_POOL_2D, Helium variant "mve" (Cortex-M55/M85): widening loads (VLDRB.S16: 8 int8
 * channels to 8 int16 lanes) and 16-bit vector adds, 32 channels per pass over the window.
 *
 * The 16-bit lanes wrap modulo 2^16, harmless while the true sum fits int16: a sum of at most 256
 * int8 values does. Every 256 window positions the lanes are moved to int32 totals, which are the
 * reference's integer sums exactly; the rounding division is the reference's (scalar). The last
 * channels % 8 use tail predication (VCTP): masked lanes are neither read nor added. */
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

void mb_avgpool2d_s8_mve(const mb_pool2d_s8_params *p, const int8_t *input, int8_t *output,
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

#else
typedef int mb_pooling_mve_unused;
#endif
