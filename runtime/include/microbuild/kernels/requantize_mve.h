/* Requantization of 4 int32 lanes at once (Helium), exactly mb_requantize_fast() (quant_fast.h)
 * per lane, for the Helium kernel variants.
 *
 * VQRDMULH(x << left, m) is floor((2 * (x << left) * m + 2^31) / 2^32) = floor(((x << left) * m
 * + 2^30) / 2^31): mb_requantize_fast's `high` (it saturates only for INT32_MIN * INT32_MIN;
 * multipliers are positive), and VSHL wraps as its uint32 shift does. The rounding right shift
 * by r, half away from zero, is VRSHL(2 * high - [high < 0], -(r + 1)): VRSHL rounds half up,
 * floor((t + 2^r) / 2^(r + 1)), and the -1 for a negative high (a whole integer moved by a half)
 * never crosses a multiple of 2^r. Needs |x << left| < 2^30 (2 * high stays in int32) and
 * r <= 28: the compiler checks both before it picks a variant that uses this. */
#ifndef MICROBUILD_KERNELS_REQUANTIZE_MVE_H
#define MICROBUILD_KERNELS_REQUANTIZE_MVE_H

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#include <stdint.h>

/* A channel block's shifts as the two VSHL/VRSHL amounts: left = max(shift, 0) and
 * -(max(-shift, 0) + 1). */
typedef struct {
    int32x4_t left;
    int32x4_t neg_right1;
} mb_mve_shifts;

static inline mb_mve_shifts mb_mve_split_shifts(int32x4_t shifts)
{
    const int32x4_t zero = vdupq_n_s32(0);
    const mb_mve_shifts s = {vmaxq_s32(shifts, zero), vsubq_n_s32(vminq_s32(shifts, zero), 1)};
    return s;
}

/* acc * multiplier * 2^shift, rounded as mb_requantize_fast (no zero point, no clamp). */
static inline int32x4_t mb_mve_scale(int32x4_t acc, int32x4_t multipliers, mb_mve_shifts s)
{
    const int32x4_t hi = vqrdmulhq_s32(vshlq_s32(acc, s.left), multipliers);
    const int32x4_t t = vaddq_s32(vaddq_s32(hi, hi), vshrq_n_s32(hi, 31));
    return vrshlq_s32(t, s.neg_right1);
}

/* acc * multiplier * 2^shift, rounded as mb_requantize_fast, plus the output zero point,
 * clamped to [amin, amax]. */
static inline int32x4_t mb_mve_requantize(int32x4_t acc, int32x4_t multipliers, mb_mve_shifts s,
                                          int32_t out_offset, int32x4_t amin, int32x4_t amax)
{
    const int32x4_t v = vaddq_n_s32(mb_mve_scale(acc, multipliers, s), out_offset);
    return vminq_s32(vmaxq_s32(v, amin), amax);
}

/* The same rounding for any int32 acc, with one multiplier and shift for all lanes (the LSTM
 * and SVDF variants, whose sums have no compile-time bound): the rounding right shift first
 * takes 1 from a negative high (VQADD of its sign bit; the AND with -right keeps that bit only
 * when right > 0, and saturation at INT32_MIN cannot change the rounded result), then VRSHL,
 * which rounds half up, gives half away from zero. No zero point, no clamp. */
typedef struct {
    int32_t multiplier, left, neg_right;
} mb_mve_requant;

static inline mb_mve_requant mb_mve_requant_of(int32_t multiplier, int32_t shift)
{
    const mb_mve_requant r = {multiplier, shift > 0 ? shift : 0, shift > 0 ? 0 : shift};
    return r;
}

static inline int32x4_t mb_mve_requantize_any(int32x4_t acc, mb_mve_requant r)
{
    const int32x4_t high = vqrdmulhq_n_s32(vshlq_r_s32(acc, r.left), r.multiplier);
    const int32x4_t negative = vshrq_n_s32(vandq_s32(high, vdupq_n_s32(r.neg_right)), 31);
    return vrshlq_n_s32(vqaddq_s32(high, negative), r.neg_right);
}

/* mb_mve_requantize_any with a multiplier and shift per lane (shifts as mb_requantize_fast's:
 * > 0 shifts left): the same rounding for any int32 acc, lane by lane. */
static inline int32x4_t mb_mve_requantize_any_lanes(int32x4_t acc, int32x4_t multipliers,
                                                    int32x4_t shifts)
{
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t neg_right = vminq_s32(shifts, zero);
    const int32x4_t high = vqrdmulhq_s32(vshlq_s32(acc, vmaxq_s32(shifts, zero)), multipliers);
    const int32x4_t negative = vshrq_n_s32(vandq_s32(high, neg_right), 31);
    return vrshlq_s32(vqaddq_s32(high, negative), neg_right);
}

#endif
#endif
