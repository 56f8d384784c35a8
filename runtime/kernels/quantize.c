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

/* Every |q| >= 256 saturates whatever the zero point; NaN is sent to the zero point. */
void mb_quantize_f32_s8(float scale, int32_t zero_point, const float *input, int8_t *output,
                        int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = (int8_t)MB_QUANTIZE_ONE(input[i] / scale, zero_point, 8);
    }
}

/* The same for int16 (16x8 models): every |q| >= 65536 saturates. */
void mb_quantize_f32_s16(float scale, int32_t zero_point, const float *input, int16_t *output,
                         int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = (int16_t)MB_QUANTIZE_ONE(input[i] / scale, zero_point, 16);
    }
}
