#include "microbuild/kernels/quantize.h"

#include "microbuild/quant.h"

/* FPv5 (Cortex-M7, Armv8-M: M33, M55) has VCVTA: float -> int32 rounding to nearest, halves away
 * from zero (std::round's rule) in one instruction; NaN converts to 0 and out-of-range values
 * saturate. The kernels below keep their own NaN and range handling in integers around it. */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FP) &&           \
    (__ARM_FP & 4) && ((__ARM_FP & 8) || __ARM_ARCH >= 8)
#define MB_QUANTIZE_VCVTA 1
#endif

#if defined(MB_QUANTIZE_VCVTA)
#include <arm_acle.h>

/* round(x), NaN -> 0, saturated to int32. */
static inline int32_t round_f32(float x)
{
    float r;
    int32_t t;
    __asm__("vcvta.s32.f32 %0, %1" : "=t"(r) : "t"(x));
    __asm__("vmov %0, %1" : "=r"(t) : "t"(r));
    return t;
}

/* SSAT to BITS + 2 bits bounds q to more than the output range plus any zero point: a bounded q
 * saturates the output as the unbounded one does; then SSAT to the output type. */
#define MB_QUANTIZE_ONE(x, zero_point, BITS)                                                   \
    __ssat(__ssat(round_f32(x), (BITS) + 2) + (zero_point), (BITS))
#elif defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FP) &&         \
    (__ARM_FP & 4) && defined(__ARM_FEATURE_SAT)
#include <arm_acle.h>
#include <string.h>

/* FPv4 (Cortex-M4F) has no VCVTA. VCVTR converts to nearest with ties to even (FPSCR's default
 * rounding mode, which microbuild never changes), NaN -> 0, out-of-range values saturate; it
 * differs from std::round only on a tie it rounded toward zero. x - t is exact (Sterbenz for
 * |x| >= 0.5, t == 0 below; larger floats are integers, t == x; a saturated t is 2^31 from a
 * multiple of 256), so that case is exactly x - t == +-0.5 with the sign of x: t then moves one
 * away from zero. */
static inline int32_t round_f32(float x)
{
    float r;
    int32_t t;
    uint32_t x_bits, d_bits;
    __asm__("vcvtr.s32.f32 %0, %1" : "=t"(r) : "t"(x));
    __asm__("vmov %0, %1" : "=r"(t) : "t"(r));
    const float d = x - (float)t;
    memcpy(&x_bits, &x, 4);
    memcpy(&d_bits, &d, 4);
    const int32_t sign = -(int32_t)(x_bits >> 31); /* 0 or -1 */
    const int32_t tie = d_bits == (0x3F000000u | (x_bits & 0x80000000u));
    return t + ((tie ^ sign) - sign);
}
#define MB_QUANTIZE_ONE(x, zero_point, BITS)                                                   \
    __ssat(__ssat(round_f32(x), (BITS) + 2) + (zero_point), (BITS))
#else
/* std::round for |x| <= 65536: halves away from zero. Truncation gives the integer part t exactly,
 * and x - t is exact too (t and x are within a factor of two of each other, or t is 0). */
static int32_t round_half_away_from_zero(float x)
{
    int32_t t = (int32_t)x;
    const float fraction = x - (float)t;
    if (fraction >= 0.5f) {
        t++;
    } else if (fraction <= -0.5f) {
        t--;
    }
    return t;
}

/* The same for any x: NaN -> 0, bounded to [-limit, limit] first (limit is exact in float and
 * every bounded result saturates the output whatever the zero point, so this changes no result
 * and keeps the float -> int conversion defined; TFLM's conversion of NaN and of values beyond
 * int32 is undefined behaviour). */
static inline int32_t round_bounded(float x, int32_t limit)
{
    const float bound = (float)limit;
    if (x != x) {
        return 0;
    }
    if (x > bound) {
        return limit;
    }
    if (x < -bound) {
        return -limit;
    }
    return round_half_away_from_zero(x);
}

#define MB_QUANTIZE_ONE(x, zero_point, BITS)                                                   \
    mb_clamp_i32(round_bounded((x), (int32_t)1 << (BITS)) + (zero_point),                      \
                 -((int32_t)1 << ((BITS) - 1)), ((int32_t)1 << ((BITS) - 1)) - 1)
#endif

/* Without a division where that is exact. x / scale costs one instruction but 14 cycles or more;
 * q0 = x * (1 / scale) is not TFLM's quotient but is within |q0| * 2^-22 of it (the reciprocal's
 * rounding, the product's and the quotient's, 2^-24 each), so where q0 lies farther than
 * |q0| * 2^-20 from every half-integer, rounding either gives the same integer n (and q0 is no
 * tie, so a ties-to-even conversion is std::round there): q0 - n is exact (|q0| < 2^22 there),
 * and |q0 - n| + |q0| * 2^-20 < 0.5 says so. A q0 beyond +-2^(BITS + 2) saturates either way.
 * Anything else (about one value in 10^4 for random data, infinities, NaN) takes TFLM's division.
 * Used only for a scale in [2^-60, 2^60], where a subnormal x (which vector arithmetic may flush
 * to 0) quantizes to 0 either way. Where it pays in instructions too: on Helium's 4 lanes, and
 * on FPv4 (Cortex-M4F), whose std::round takes ten instructions; FPv5 without Helium (Cortex-M7,
 * M33) rounds in one (VCVTA), and divides. */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FP) &&           \
    (__ARM_FP & 4) && defined(__ARM_FEATURE_SAT)
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && defined(MB_QUANTIZE_VCVTA)
#define MB_QUANTIZE_MVE 1
#include <arm_mve.h>

/* 4 lanes; 0 when a lane needs the division. */
static inline int mve_quantize4(float32x4_t x, float reciprocal, float limit, int32_t zero_point,
                                int32_t low, int32_t high, int32x4_t *q)
{
    const float32x4_t q0 = vmulq_n_f32(x, reciprocal);
    const int32x4_t n = vcvtaq_s32_f32(q0);
    const float32x4_t magnitude = vabsq_f32(q0);
    const float32x4_t slack = vaddq_f32(vabsq_f32(vsubq_f32(q0, vcvtq_f32_s32(n))),
                                        vmulq_n_f32(magnitude, 0x1p-20f));
    /* Lanes safe: slack below one half, or saturating (NaN lanes are neither). */
    const mve_pred16_t safe = vcmpltq_n_f32(slack, 0.5f) | vcmpgeq_n_f32(magnitude, limit);
    *q = vmaxq_s32(vminq_s32(vqaddq_n_s32(n, zero_point), vdupq_n_s32(high)), vdupq_n_s32(low));
    return safe == 0xFFFF;
}
#elif !defined(MB_QUANTIZE_VCVTA)
#define MB_QUANTIZE_SCALAR 1

static inline int32_t reciprocal_round(float x, float scale, float reciprocal, float limit)
{
    const float q0 = x * reciprocal;
    float r;
    int32_t n;
    __asm__("vcvtr.s32.f32 %0, %1" : "=t"(r) : "t"(q0));
    __asm__("vmov %0, %1" : "=r"(n) : "t"(r));
    const float magnitude = __builtin_fabsf(q0);
    if (__builtin_fabsf(q0 - (float)n) + magnitude * 0x1p-20f < 0.5f || magnitude >= limit) {
        return n;
    }
    return round_f32(x / scale);
}
#define MB_SATURATE(n, zero_point, BITS) __ssat(__ssat((n), (BITS) + 2) + (zero_point), (BITS))
#endif
#endif

#if defined(MB_QUANTIZE_MVE) || defined(MB_QUANTIZE_SCALAR)
static inline int fast_scale(float scale)
{
    return scale >= 0x1p-60f && scale <= 0x1p60f;
}
#endif

/* Every |q| >= 256 saturates whatever the zero point; NaN is sent to the zero point. */
void mb_quantize_f32_s8(float scale, int32_t zero_point, const float *input, int8_t *output,
                        int32_t size)
{
    int32_t i = 0;
#if defined(MB_QUANTIZE_MVE)
    if (fast_scale(scale)) {
        const float reciprocal = 1.0f / scale;
        for (; i + 4 <= size; i += 4) {
            int32x4_t q;
            if (mve_quantize4(vld1q_f32(input + i), reciprocal, 1024.0f, zero_point, -128, 127,
                              &q)) {
                vstrbq_s32(output + i, q);
                continue;
            }
            for (int32_t k = 0; k < 4; k++) { /* input[i + k] is read before output[i + k] */
                output[i + k] = (int8_t)MB_QUANTIZE_ONE(input[i + k] / scale, zero_point, 8);
            }
        }
    }
#elif defined(MB_QUANTIZE_SCALAR)
    if (fast_scale(scale)) {
        const float reciprocal = 1.0f / scale;
        for (; i < size; i++) {
            output[i] = (int8_t)MB_SATURATE(
                reciprocal_round(input[i], scale, reciprocal, 1024.0f), zero_point, 8);
        }
    }
#endif
    for (; i < size; i++) {
        output[i] = (int8_t)MB_QUANTIZE_ONE(input[i] / scale, zero_point, 8);
    }
}

/* The same for int16 (16x8 models): every |q| >= 65536 saturates. */
void mb_quantize_f32_s16(float scale, int32_t zero_point, const float *input, int16_t *output,
                         int32_t size)
{
    int32_t i = 0;
#if defined(MB_QUANTIZE_MVE)
    if (fast_scale(scale)) {
        const float reciprocal = 1.0f / scale;
        for (; i + 4 <= size; i += 4) {
            int32x4_t q;
            if (mve_quantize4(vld1q_f32(input + i), reciprocal, 262144.0f, zero_point, -32768,
                              32767, &q)) {
                vstrhq_s32(output + i, q);
                continue;
            }
            for (int32_t k = 0; k < 4; k++) {
                output[i + k] = (int16_t)MB_QUANTIZE_ONE(input[i + k] / scale, zero_point, 16);
            }
        }
    }
#elif defined(MB_QUANTIZE_SCALAR)
    if (fast_scale(scale)) {
        const float reciprocal = 1.0f / scale;
        for (; i < size; i++) {
            output[i] = (int16_t)MB_SATURATE(
                reciprocal_round(input[i], scale, reciprocal, 262144.0f), zero_point, 16);
        }
    }
#endif
    for (; i < size; i++) {
        output[i] = (int16_t)MB_QUANTIZE_ONE(input[i] / scale, zero_point, 16);
    }
}
