/* PRELU, Helium variants "mve" (int8) and "mve_s16" (int16 input, alpha widened to int16 at
 * compile time): prelu_fast.c's arithmetic on four int32 lanes.
 *
 * Per lane: x = input + input offset; both rescalings are computed, x by multiplier 1 and
 * x * (alpha + alpha offset) by multiplier 2, each with requantize_mve.h's
 * mb_mve_requantize_any (mb_requantize_fast's rounding for any int32, one multiplier and shift
 * for all lanes), and VPSEL keeps the first where x >= 0: the reference's choice per element.
 * Both products fit int32 (|x| < 2^17, |alpha + offset| < 2^9) and prelu.py refuses the left
 * shifts that would overflow, as for the reference. Tails use tail predication (VCTP); a
 * broadcast operand (stride 0) is one vector for the whole run; other strides (which the
 * broadcast walker does not produce for a dense innermost run) go one lane at a time. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/prelu.h"
#include "microbuild/kernels/requantize_mve.h"

/* What every lane of one run shares. */
typedef struct {
    mb_mve_requant positive, negative;
    int32_t output_offset;
    int32x4_t lo, hi; /* the element type's range */
} prelu_lanes;

static inline prelu_lanes prelu_lanes_of(const mb_prelu_params *p, int32_t lo, int32_t hi)
{
    const prelu_lanes k = {mb_mve_requant_of(p->output_multiplier_1, p->output_shift_1),
                           mb_mve_requant_of(p->output_multiplier_2, p->output_shift_2),
                           p->output_offset, vdupq_n_s32(lo), vdupq_n_s32(hi)};
    return k;
}

/* x: inputs plus the input offset; alpha: alphas plus alpha's offset. */
static inline int32x4_t prelu4(const prelu_lanes *k, int32x4_t x, int32x4_t alpha)
{
    const int32x4_t pos = mb_mve_requantize_any(x, k->positive);
    const int32x4_t neg = mb_mve_requantize_any(vmulq_s32(x, alpha), k->negative);
    const int32x4_t v = vaddq_n_s32(vpselq_s32(pos, neg, vcmpgeq_n_s32(x, 0)),
                                    k->output_offset);
    return vminq_s32(vmaxq_s32(v, k->lo), k->hi);
}

/* One row for element type T loaded with VLD (VLDRB.S32 or VLDRH.S32) and stored with VST. */
#define PRELU_ROW_MVE(NAME, T, VLD, VST, LO, HI)                                              \
    static void NAME(const void *params, const T *a, int32_t a_step, const T *b,              \
                     int32_t b_step, T *out, int32_t n)                                       \
    {                                                                                         \
        const mb_prelu_params *p = (const mb_prelu_params *)params;                           \
        const prelu_lanes k = prelu_lanes_of(p, LO, HI);                                      \
        const int32_t in_off = p->input_offset, alpha_off = p->alpha_offset;                  \
        if ((a_step == 1 || a_step == 0) && (b_step == 1 || b_step == 0)) {                   \
            const int32x4_t fixed_x = vdupq_n_s32(a[0] + in_off);                             \
            const int32x4_t fixed_alpha = vdupq_n_s32(b[0] + alpha_off);                      \
            for (int32_t i = 0; i < n; i += 4) {                                              \
                const mve_pred16_t pred = vctp32q((uint32_t)(n - i));                         \
                const int32x4_t x = a_step ? vaddq_n_s32(VLD(a + i, pred), in_off) : fixed_x; \
                const int32x4_t alpha =                                                       \
                    b_step ? vaddq_n_s32(VLD(b + i, pred), alpha_off) : fixed_alpha;          \
                VST(out + i, prelu4(&k, x, alpha), pred);                                     \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        for (int32_t i = 0; i < n; i++) {                                                     \
            VST(out + i,                                                                      \
                prelu4(&k, vdupq_n_s32(a[i * a_step] + in_off),                               \
                       vdupq_n_s32(b[i * b_step] + alpha_off)),                               \
                vctp32q(1));                                                                  \
        }                                                                                     \
    }

PRELU_ROW_MVE(prelu_row_mve, int8_t, vldrbq_z_s32, vstrbq_p_s32, INT8_MIN, INT8_MAX)
PRELU_ROW_MVE(prelu_row_mve_s16, int16_t, vldrhq_z_s32, vstrhq_p_s32, INT16_MIN, INT16_MAX)

void mb_prelu_s8_mve(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                     const int8_t *input, const int8_t *alpha, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input, alpha, output, prelu_row_mve, params);
}

void mb_prelu_s16_mve(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                      const int16_t *input, const int16_t *alpha, int16_t *output,
                      void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input, alpha, output, prelu_row_mve_s16, params);
}

#else
typedef int mb_prelu_mve_unused;
#endif
