/* x * multiplier * 2^shift rounded as mb_mul_by_quantized_multiplier (quant.h, bit-exact with
 * TFLM) for x the difference of two 8- or 16-bit values (|x| < 2^bits), in fewer instructions:
 *   high = ((x << left) * M + 2^30) >> 31 = SMMULR(x << (left + 1), M)   (Armv7E-M, v8-M DSP)
 *                                         = VQRDMULH(x << left, M)        (Helium, 4 lanes)
 * and the rounding right shift by r (half away from zero) as (2 high - [high < 0] + 2^r) >>
 * (r + 1), whose sum stays in int32. Both need |x << left| < 2^30 (then |high| < 2^30 too: M <
 * 2^31) and r <= 29: mb_small_scale_of says whether a (multiplier, shift) qualifies for inputs of
 * `bits` bits; where not, callers keep their general path. tests/compiler/requantize_small_test.c
 * checks both forms against the reference over every input value and shift. */
#ifndef MICROBUILD_QUANT_SMALL_H
#define MICROBUILD_QUANT_SMALL_H

#include <stdint.h>

#include "microbuild/quant_fast.h"

typedef struct {
    int32_t multiplier, left, right;
} mb_small_scale;

static inline int mb_small_scale_of(int32_t multiplier, int32_t shift, int bits,
                                    mb_small_scale *s)
{
    s->multiplier = multiplier;
    s->left = shift > 0 ? shift : 0;
    s->right = shift > 0 ? 0 : -shift;
    return multiplier >= 0 && s->left <= 30 - bits && s->right <= 29;
}

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#include <arm_acle.h>

#include "microbuild/dsp_words.h"
#define MB_SMALL_SCALE_DSP 1

/* SMMULR, then the rounding shift as two adds with shifted operands and one ASR (about 6
 * instructions instead of mb_requantize_fast32's 12-15; dsp_words.h's mb_rescale_small is the
 * same for a right shift of at least 1 with the half precomputed). */
static inline int32_t mb_small_scale_apply(int32_t x, const mb_small_scale *s)
{
    const int32_t high = mb_smmulr((int32_t)((uint32_t)x << (s->left + 1)), s->multiplier);
    const int32_t t = (int32_t)(((uint32_t)high << 1) + (uint32_t)(high >> 31) +
                                ((uint32_t)1 << s->right));
    return t >> (s->right + 1);
}

/* v clamped to an 8- or 16-bit type's range [LO, HI] (constants): one SSAT / USAT. */
#define MB_SATURATE_TO(LO, HI, v)                                                               \
    ((LO) == 0 ? (int32_t)__usat((v), 8) : (HI) == 127 ? __ssat((v), 8) : __ssat((v), 16))
#else
static inline int32_t mb_small_scale_apply(int32_t x, const mb_small_scale *s)
{
    return mb_requantize_fast32(x, s->multiplier, s->left > 0 ? s->left : -s->right);
}
#endif

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

/* The same on 4 lanes. */
static inline int32x4_t mb_small_scale4(int32x4_t x, const mb_small_scale *s)
{
    const int32x4_t high = vqrdmulhq_n_s32(vshlq_r_s32(x, s->left), s->multiplier);
    const int32x4_t t = vaddq_s32(vaddq_s32(high, high), vshrq_n_s32(high, 31));
    return vrshlq_n_s32(t, -(s->right + 1));
}
#endif

#endif
