/* Integer helpers shared by the signal-library kernels (signal_*.c, TFLM's Signal* custom
 * operators): the C of TFLM's signal library relies on two's-complement behaviour that ISO C
 * leaves to the implementation (narrowing to int16, right shifts of negative values); these spell
 * it out so every compiler (avr-gcc with its 16-bit int included) computes the same bits. */
#ifndef MICROBUILD_KERNELS_SIGNAL_COMMON_H
#define MICROBUILD_KERNELS_SIGNAL_COMMON_H

#include <stdint.h>

#if defined(__ARM_FEATURE_SAT)
#include <arm_acle.h>
#endif

/* Arithmetic (flooring) right shift of an int32, 0 <= shift < 32. */
static inline int32_t mb_sig_asr32(int32_t x, int32_t shift)
{
    /* A compiler whose >> of a negative int is arithmetic (GCC, clang, avr-gcc: documented)
     * folds the test away and emits one ASR; the spelled-out form is for any other. */
    if (((int32_t)-8 >> 1) == -4) {
        return x >> shift;
    }
    return x >= 0 ? (x >> shift) : (int32_t)~(~(uint32_t)x >> shift);
}

/* The low 16 bits of x as an int16 (what storing an int into a short does on TFLM's targets). */
static inline int16_t mb_sig_wrap16(int32_t x)
{
    /* GCC and clang document the narrowing conversion as modulo 2^16: one SXTH. */
#if defined(__GNUC__)
    return (int16_t)x;
#else
    const uint16_t u = (uint16_t)((uint32_t)x & 0xFFFFu);
    return u < 0x8000u ? (int16_t)u : (int16_t)((int32_t)u - (int32_t)65536);
#endif
}

/* x clamped to the int16 range: one SSAT where the core has it. */
static inline int16_t mb_sig_sat16(int32_t x)
{
#if defined(__ARM_FEATURE_SAT)
    return (int16_t)__ssat(x, 16);
#else
    return (int16_t)(x < INT16_MIN ? INT16_MIN : (x > INT16_MAX ? INT16_MAX : x));
#endif
}

/* The low 32 bits of x as an int32. */
static inline int32_t mb_sig_wrap32(uint32_t u)
{
    return u < 0x80000000u ? (int32_t)u : -(int32_t)(~u) - 1;
}

/* Bits needed to write x; 32 for x == 0 (TFLM's MostSignificantBit32 with GCC/Clang, which
 * counts leading zeros). */
static inline uint32_t mb_sig_msb32(uint32_t x)
{
    if (x == 0) {
        return 32;
    }
#if defined(__GNUC__) && __SIZEOF_INT__ == 4
    return 32u - (uint32_t)__builtin_clz(x); /* one CLZ instead of a loop of up to 32 */
#else
    uint32_t n = 0;
    while (x != 0) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

/* The same for 64-bit values (64 for 0). */
static inline uint32_t mb_sig_msb64(uint64_t x)
{
    const uint32_t high = (uint32_t)(x >> 32);
    if (x == 0) {
        return 64;
    }
    if (high != 0) {
        return 32 + mb_sig_msb32(high);
    }
    return mb_sig_msb32((uint32_t)x);
}

/* Sample i of a stream's held samples (n of them, oldest first) followed by new ones: the
 * delay line and the framer read their outputs and their next held samples this way, without
 * a buffer joining the two. */
static inline int16_t mb_sig_held_then_new(const int16_t *held, int32_t n, const int16_t *in,
                                           int32_t i)
{
    return i < n ? held[i] : in[i - n];
}

#endif
