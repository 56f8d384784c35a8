/* The int16 LOGISTIC and TANH (sigmoid16.h) on 4 int32 lanes (Helium): the standalone
 * operators' loops (sigmoid16.c) and the LSTM's gates (lstm_mve.c). Lane by lane the same
 * arithmetic as mb_logistic_s16_of / mb_tanh_s16_of. */
#ifndef MICROBUILD_KERNELS_SIGMOID16_MVE_H
#define MICROBUILD_KERNELS_SIGMOID16_MVE_H

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#include <stdint.h>

#include "microbuild/kernels/sigmoid16.h"

/* sigmoid16.c on 4 lanes: the magnitude of the rescaled input interpolated between two entries
 * of mb_sigmoid_table_u16 (two gathers), entry = magnitude >> bits (9: logistic, 8: tanh),
 * `saturated` past the table's last entry. `bounded` (a constant): the caller knows every
 * entry is below 255, and the test, the clamp of the index and the select go. */
static inline __attribute__((always_inline)) uint32x4_t mb_sigmoid16_table_lerp(
    uint32x4_t magnitude, int32_t bits, uint32_t saturated, const int bounded)
{
    const uint32x4_t entry = vshlq_r_u32(magnitude, -bits);
    /* past the table: a valid dummy read, replaced by `saturated` below */
    const uint32x4_t index = bounded ? entry : vminq_u32(entry, vdupq_n_u32(254));
    const uint32x4_t a = vldrhq_gather_shifted_offset_u32(mb_sigmoid_table_u16, index);
    const uint32x4_t b = vldrhq_gather_shifted_offset_u32(mb_sigmoid_table_u16 + 1, index);
    const uint32x4_t fraction = vandq_u32(magnitude, vdupq_n_u32(((uint32_t)1 << bits) - 1));
    const uint32x4_t value =
        vaddq_u32(vshlq_r_u32(a, bits), vmulq_u32(fraction, vsubq_u32(b, a)));
    if (bounded) {
        return value;
    }
    return vpselq_u32(vdupq_n_u32(saturated), value, vcmpcsq_n_u32(entry, 255));
}

/* mb_logistic_s16_of / mb_tanh_s16_of of one lane each, the input already rescaled. BOUNDED (a
 * constant): every |x| >> 9 is below 255, as for the LSTM's gates, given 3 x (an int16 sum):
 * |x| <= 98304, at most entry 192 (tanh's input, the cell state rescaled, can be past it). */
static inline __attribute__((always_inline)) int32x4_t mb_logistic_s16_lanes(int32x4_t x,
                                                                             const int bounded)
{
    const uint32x4_t r = mb_sigmoid16_table_lerp(vreinterpretq_u32_s32(vabsq_s32(x)), 9,
                                                 (uint32_t)0x7FFF << 10, bounded);
    const uint32x4_t positive = vaddq_n_u32(r, (uint32_t)1 << 9);
    const uint32x4_t negative =
        vsubq_u32(vdupq_n_u32(((uint32_t)1 << 25) + ((uint32_t)1 << 9) - 1), r);
    const uint32x4_t out = vpselq_u32(positive, negative, vcmpgeq_n_s32(x, 0));
    return vreinterpretq_s32_u32(vshrq_n_u32(out, 10));
}

static inline __attribute__((always_inline)) int32x4_t mb_tanh_s16_lanes(int32x4_t x)
{
    const int32x4_t r = vreinterpretq_s32_u32(mb_sigmoid16_table_lerp(
        vreinterpretq_u32_s32(vabsq_s32(x)), 8, (uint32_t)0xFFFF << 8, 0));
    const int32x4_t positive = vaddq_n_s32(r, -((int32_t)1 << 23) + ((int32_t)1 << 7));
    const int32x4_t negative =
        vsubq_s32(vdupq_n_s32(((int32_t)1 << 23) + ((int32_t)1 << 7) - 1), r);
    return vshrq_n_s32(vpselq_s32(positive, negative, vcmpgeq_n_s32(x, 0)), 8);
}

#endif
#endif
