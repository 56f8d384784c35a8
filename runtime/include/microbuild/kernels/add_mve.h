/* The int8 ADD's arithmetic on four int32 lanes (Helium), shared by the ADD variant (add_mve.c,
 * whose comment says why it equals TFLM's) and CONV_2D's fused residual ADD (conv2d_mve.c).
 *
 * Per lane: (x + offset) * 2^left_shift is a VMUL and a VADD; VQRDMULH by the multiplier is
 * (a * m + 2^30) >> 31, the rounding doubling high multiply (it saturates only for INT32_MIN *
 * INT32_MIN, impossible with positive multipliers); VRSHL by -r adds 2^(r-1) and shifts right,
 * after 1 is taken from negative lanes when r > 0: the rounding right shift, half away from zero.
 * Every shift of mb_add_s8_params is <= 0 (add.h). */
#ifndef MICROBUILD_KERNELS_ADD_MVE_H
#define MICROBUILD_KERNELS_ADD_MVE_H

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#include <stdint.h>

#include "microbuild/kernels/add.h"

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

/* Every constant is a scalar operand (VQRDMULH, VMLA, VRSHL, VMUL, VADD take one), so a loop
 * keeps its Q registers for the data: the 1 taken from negative lanes is the sign bit (VSHR.U32
 * #31) times `negative` added with one VMLA. */
static inline int32x4_t mb_add_mve_rescale(const mb_add_mve_step *s, int32x4_t a)
{
    const int32x4_t h = vqrdmulhq_n_s32(a, s->multiplier);
    const int32x4_t sign = vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(h), 31));
    return vrshlq_n_s32(vmlaq_n_s32(h, sign, s->negative), -s->right);
}

/* An input's lanes (int8 values widened to int32) on the common scale. */
static inline int32x4_t mb_add_mve_input(const mb_add_mve_step *s, int32x4_t x)
{
    return mb_add_mve_rescale(s, vaddq_n_s32(vmulq_n_s32(x, s->scale), s->offset));
}

/* The whole ADD: both inputs' steps, the sum's, the output zero point and activation bounds. */
typedef struct {
    mb_add_mve_step in1, in2, out;
    int32_t offset, min, max;
} mb_add_mve;

static inline mb_add_mve mb_add_mve_of(const mb_add_s8_params *p)
{
    mb_add_mve a;
    a.in1 = mb_add_mve_make_step(p->input1_offset, p->left_shift, p->input1_multiplier,
                                 p->input1_shift);
    a.in2 = mb_add_mve_make_step(p->input2_offset, p->left_shift, p->input2_multiplier,
                                 p->input2_shift);
    a.out = mb_add_mve_make_step(0, 0, p->output_multiplier, p->output_shift);
    a.offset = p->output_offset;
    a.min = p->activation_min;
    a.max = p->activation_max;
    return a;
}

/* One input's rescaling on 4 lanes; PLAIN: its right shift is 0, where the rounding shift is
 * the identity (the VMLA by `negative` = 0 and the VRSHL by 0), so the high word is the result.
 * TFLM gives the input of the larger scale the multiplier 2^30 and shift 0, so one input of
 * every ADD is plain: 3 instructions fewer per 4 values. */
static inline int32x4_t mb_add_mve_rescale_of(const mb_add_mve_step *s, int32x4_t a,
                                              const int plain)
{
    return plain ? vqrdmulhq_n_s32(a, s->multiplier) : mb_add_mve_rescale(s, a);
}

/* x1 + x2 on 4 lanes of int8 values widened to int32, plus the zero point zp, clamped to
 * [lo, hi]: the output's lanes. zp is a vector and both inputs take in1's scale (the steps share
 * left_shift): 13 scalars did not fit the core registers beside 3 pointers and GCC spilled.
 * PLAIN1 / PLAIN2: input 1 / 2 has no right shift (mb_add_mve_rescale_of). */
static inline int32x4_t mb_add_mve_lanes_of(const mb_add_mve *a, int32x4_t x1, int32x4_t x2,
                                            int32x4_t zp, int32x4_t lo, int32x4_t hi,
                                            const int plain1, const int plain2)
{
    /* x * 2^left + offset in one VMLAS each (Qda * Qn + Rm, the scale as a vector) */
    const int32x4_t scale = vdupq_n_s32(a->in1.scale);
    const int32x4_t in1 = vmlasq_n_s32(x1, scale, a->in1.offset);
    const int32x4_t in2 = vmlasq_n_s32(x2, scale, a->in2.offset);
    const int32x4_t sum = vaddq_s32(mb_add_mve_rescale_of(&a->in1, in1, plain1),
                                    mb_add_mve_rescale_of(&a->in2, in2, plain2));
    const int32x4_t y = vaddq_s32(mb_add_mve_rescale(&a->out, sum), zp);
    return vminq_s32(vmaxq_s32(y, lo), hi);
}

/* mb_add_mve_elements' loop, PLAIN1 / PLAIN2 constants in each copy: NAME for elements of type
 * T, loaded with VLD / VLDZ (unpredicated / predicated, widening to int32) and stored with VST /
 * VSTP. add_mve.c defines the int16 one. */
#define MB_ADD_MVE_RUN(NAME, T, VLD, VLDZ, VST, VSTP)                                          \
    static inline __attribute__((always_inline)) void NAME(                                    \
        const mb_add_mve *a, const T *x1, const T *x2, T *out, int32_t n, const int plain1,    \
        const int plain2)                                                                      \
    {                                                                                          \
        const int32x4_t lo = vdupq_n_s32(a->min);                                              \
        const int32x4_t hi = vdupq_n_s32(a->max);                                              \
        const int32x4_t zp = vdupq_n_s32(a->offset);                                           \
        for (; n >= 4; n -= 4, x1 += 4, x2 += 4, out += 4) {                                   \
            VST(out, mb_add_mve_lanes_of(a, VLD(x1), VLD(x2), zp, lo, hi, plain1, plain2));    \
        }                                                                                      \
        if (n > 0) {                                                                           \
            const mve_pred16_t pred = vctp32q((uint32_t)n);                                    \
            VSTP(out,                                                                          \
                 mb_add_mve_lanes_of(a, VLDZ(x1, pred), VLDZ(x2, pred), zp, lo, hi, plain1,    \
                                     plain2),                                                  \
                 pred);                                                                        \
        }                                                                                      \
    }

MB_ADD_MVE_RUN(mb_add_mve_run, int8_t, vldrbq_s32, vldrbq_z_s32, vstrbq_s32, vstrbq_p_s32)

/* out[i] = x1[i] + x2[i] for n contiguous int8 elements, 4 lanes at a time, the last 1-3
 * tail-predicated after the loop (a predicate inside it costs a VPST per load and store).
 * x2[i] is read before out[i] is written: out may be x1 or x2. */
static inline void mb_add_mve_elements(const mb_add_mve *a, const int8_t *x1, const int8_t *x2,
                                       int8_t *out, int32_t n)
{
    if (a->in1.right == 0) {
        mb_add_mve_run(a, x1, x2, out, n, 1, 0);
    } else if (a->in2.right == 0) {
        mb_add_mve_run(a, x1, x2, out, n, 0, 1);
    } else {
        mb_add_mve_run(a, x1, x2, out, n, 0, 0);
    }
}

#endif
#endif
