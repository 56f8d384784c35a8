/* The 16x8 convolutions' requantization, derived once per call (conv2d_s16_dsp.c,
 * conv2d_s16_mve.c, depthwise_conv2d_s16.c). TFLM computes, in int64,
 *     ((acc + bias) * reduced + 2^(shift_r - 1)) >> shift_r
 * (mb_mul_by_quantized_multiplier_s64: reduced the multiplier rounded to 16 bits, shift_r =
 * 15 - shift). Modulo 2^64 that is (acc * reduced + c) >> shift_r with the channel constant
 * c = bias * reduced + 2^(shift_r - 1): one 32 x 32 -> 64 multiply-accumulate for an int32 sum.
 * The compiler refuses a shift over 14 (shift_r < 1) for the kernels that use this. */
#ifndef MICROBUILD_KERNELS_CONV_S16_REQUANT_H
#define MICROBUILD_KERNELS_CONV_S16_REQUANT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t c;
    int32_t reduced;
    int32_t shift_r; /* 1..63 */
} mb_s16_channel;

static inline void mb_s16_channels(const int64_t *bias, const int32_t *multipliers,
                                   const int32_t *shifts, int32_t channels, mb_s16_channel *t)
{
    for (int32_t c = 0; c < channels; c++) {
        const int32_t m = multipliers[c];
        const int32_t reduced = m < 0x7FFF0000 ? ((m + ((int32_t)1 << 15)) >> 16) : 0x7FFF;
        const int32_t shift_r = 15 - shifts[c];
        const uint64_t b = bias != NULL ? (uint64_t)bias[c] : 0u;
        t[c].reduced = reduced;
        t[c].shift_r = shift_r;
        t[c].c = (int64_t)(b * (uint64_t)(int64_t)reduced + ((uint64_t)1 << (shift_r - 1)));
    }
}

/* The low 32 bits of v >> r (arithmetic), 1 <= r <= 63. */
static inline int32_t mb_s16_shift(int64_t v, int32_t r)
{
    const uint32_t lo = (uint32_t)v;
    const int32_t hi = (int32_t)(v >> 32);
    if (r < 32) {
        return (int32_t)((lo >> r) | ((uint32_t)hi << (32 - r)));
    }
    return hi >> (r - 32);
}

static inline int16_t mb_s16_clamp(int32_t v, int32_t lo, int32_t hi)
{
    return (int16_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* An int32 sum. */
static inline int16_t mb_s16_finish32(int32_t acc, const mb_s16_channel *t, int32_t lo,
                                      int32_t hi)
{
    const uint64_t v = (uint64_t)((int64_t)acc * t->reduced) + (uint64_t)t->c;
    return mb_s16_clamp(mb_s16_shift((int64_t)v, t->shift_r), lo, hi);
}

/* An int64 sum (wrapping as TFLM's int64 arithmetic does in practice). */
static inline int16_t mb_s16_finish64(int64_t acc, const mb_s16_channel *t, int32_t lo,
                                      int32_t hi)
{
    const uint64_t v = (uint64_t)acc * (uint64_t)(int64_t)t->reduced + (uint64_t)t->c;
    return mb_s16_clamp(mb_s16_shift((int64_t)v, t->shift_r), lo, hi);
}

#endif
