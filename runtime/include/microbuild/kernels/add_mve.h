/* The int8 ADD's arithmetic on four int32 lanes (Helium), shared by the ADD variant (add_mve.c,
 * whose comment says why it equals TFLM's) and CONV_2D's fused residual ADD (conv2d_mve.c).
 *
 * Per lane: (x + offset) * 2^left_shift is one VMLA; VQRDMULH by the multiplier is
 * (a * m + 2^30) >> 31, the rounding doubling high multiply (it saturates only for INT32_MIN *
 * INT32_MIN, impossible with positive multipliers); VRSHL by -r adds 2^(r-1) and shifts right,
 * after 1 is taken from negative lanes when r > 0: the rounding right shift, half away from zero.
 * Every shift of mb_add_s8_params is <= 0 (add.h). */
#ifndef MICROBUILD_KERNELS_ADD_MVE_H
#define MICROBUILD_KERNELS_ADD_MVE_H

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#include <stdint.h>

/* One rescaling step: an input's (offset, 2^left_shift, multiplier, shift), or the output's
 * (0, 1, multiplier, shift). */
typedef struct {
    int32_t offset;     /* input offset * 2^left_shift */
    int32_t scale;      /* 2^left_shift */
    int32_t multiplier;
    int32_t right;      /* right shift, >= 0 */
    int32_t negative;   /* -1 when right > 0, else 0 */
} mb_add_mve_step;

static inline mb_add_mve_step mb_add_mve_make_step(int32_t offset, int32_t left_shift,
                                                   int32_t multiplier, int32_t shift)
{
    mb_add_mve_step s;
    s.scale = (int32_t)1 << left_shift;
    s.offset = offset * s.scale;
    s.multiplier = multiplier;
    s.right = shift > 0 ? 0 : -shift;
    s.negative = s.right > 0 ? -1 : 0;
    return s;
}

static inline int32x4_t mb_add_mve_rescale(const mb_add_mve_step *s, int32x4_t a)
{
    int32x4_t h = vqrdmulhq_n_s32(a, s->multiplier);
    h = vaddq_s32(h, vandq_s32(vshrq_n_s32(h, 31), vdupq_n_s32(s->negative)));
    return vrshlq_n_s32(h, -s->right);
}

/* An input's lanes (int8 values widened to int32) on the common scale. */
static inline int32x4_t mb_add_mve_input(const mb_add_mve_step *s, int32x4_t x)
{
    return mb_add_mve_rescale(s, vmlaq_n_s32(vdupq_n_s32(s->offset), x, s->scale));
}

#endif
#endif
