/* MUL, Helium variant "mve" (Cortex-M55/M85): the reference's arithmetic (mul.c) on four int32
 * lanes. Per lane: VLDRB.S32 widens 4 int8, the offsets are added and the corrected inputs
 * multiplied (|product| < 2^16), shifted left by the output shift's positive part (<= 15, so it
 * fits as in the reference), then add_mve.h's rescaling step: VQRDMULH is the rounding doubling
 * high multiply (its one saturating case, INT32_MIN * INT32_MIN, cannot occur: the multiplier is
 * positive) and VRSHL, after 1 is taken from negative lanes, the rounding right shift half away
 * from zero. Tails are tail-predicated; other strides than 0 and 1 go element by element. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/add_mve.h"
#include "microbuild/kernels/mul.h"
#include "microbuild/quant_fast.h"

/* Both operands contiguous (same shapes, or rows of a broadcast over outer dimensions, as a
 * squeeze-excite scale): whole groups of 4 unpredicated, then one tail-predicated group. With a
 * predicate inside the loop GCC rebuilt it from VPR every step (~36 instructions per 4 values
 * against ~16 here). SHIFTED: the output shift is positive (a VSHL more), a constant per copy. */
static inline __attribute__((always_inline)) int32x4_t mul_lanes(const mb_mul_s8_params *p,
                                                                 const mb_add_mve_step *so,
                                                                 int32x4_t x1, int32x4_t x2,
                                                                 int32x4_t lo, int32x4_t hi,
                                                                 int32x4_t left, int shifted)
{
    int32x4_t prod = vmulq_s32(vaddq_n_s32(x1, p->input1_offset),
                               vaddq_n_s32(x2, p->input2_offset));
    if (shifted) {
        prod = vshlq_s32(prod, left);
    }
    const int32x4_t y = vaddq_n_s32(mb_add_mve_rescale(so, prod), p->output_offset);
    return vminq_s32(vmaxq_s32(y, lo), hi);
}

static inline __attribute__((always_inline)) void mul_run_s8(const mb_mul_s8_params *p,
                                                             const int8_t *a, const int8_t *b,
                                                             int8_t *out, int32_t n, int shifted)
{
    const mb_add_mve_step so = mb_add_mve_make_step(0, 0, p->output_multiplier, p->output_shift);
    const int32x4_t lo = vdupq_n_s32(p->activation_min);
    const int32x4_t hi = vdupq_n_s32(p->activation_max);
    const int32x4_t left = vdupq_n_s32(p->output_shift > 0 ? p->output_shift : 0);
    for (; n >= 4; n -= 4, a += 4, b += 4, out += 4) {
        vstrbq_s32(out, mul_lanes(p, &so, vldrbq_s32(a), vldrbq_s32(b), lo, hi, left, shifted));
    }
    if (n > 0) {
        const mve_pred16_t pred = vctp32q((uint32_t)n);
        vstrbq_p_s32(out, mul_lanes(p, &so, vldrbq_z_s32(a, pred), vldrbq_z_s32(b, pred), lo, hi,
                                    left, shifted),
                     pred);
    }
}

/* One row for element type T loaded with VLD (VLDRB.S32 or VLDRH.S32) and stored with VST. For
 * int16 operands (zero points 0, no left shift: mul.py refuses one) the product is at most 2^30
 * in magnitude, never INT32_MIN, so VQRDMULH does not saturate on it either. */
#define MUL_ROW_MVE(NAME, T, VLD, VST)                                                        \
    static void NAME(const void *params, const T *a, int32_t a_step, const T *b,              \
                     int32_t b_step, T *out, int32_t n)                                       \
    {                                                                                         \
        const mb_mul_s8_params *p = (const mb_mul_s8_params *)params;                         \
        const int32_t left = p->output_shift > 0 ? p->output_shift : 0;                       \
        /* The output step: offset 0, scale 1, the right shift (a positive one is ignored). */\
        const mb_add_mve_step so =                                                            \
            mb_add_mve_make_step(0, 0, p->output_multiplier, p->output_shift);                \
        const int32_t zp = p->output_offset;                                                  \
        const int32_t lo = p->activation_min;                                                 \
        const int32_t hi = p->activation_max;                                                 \
        if ((a_step == 1 || a_step == 0) && (b_step == 1 || b_step == 0)) {                   \
            /* A broadcast operand is the same (corrected) value in every lane. */            \
            const int32x4_t fixed1 = vdupq_n_s32(a_step == 0 ? a[0] + p->input1_offset : 0);  \
            const int32x4_t fixed2 = vdupq_n_s32(b_step == 0 ? b[0] + p->input2_offset : 0);  \
            for (int32_t i = 0; i < n; i += 4) {                                              \
                const mve_pred16_t pred = vctp32q((uint32_t)(n - i));                         \
                const int32x4_t x1 =                                                          \
                    a_step ? vaddq_n_s32(VLD(a + i, pred), p->input1_offset) : fixed1;        \
                const int32x4_t x2 =                                                          \
                    b_step ? vaddq_n_s32(VLD(b + i, pred), p->input2_offset) : fixed2;        \
                const int32x4_t shifted = vshlq_s32(vmulq_s32(x1, x2), vdupq_n_s32(left));    \
                int32x4_t y = mb_add_mve_rescale(&so, shifted);                               \
                y = vminq_s32(vmaxq_s32(vaddq_n_s32(y, zp), vdupq_n_s32(lo)), vdupq_n_s32(hi));\
                VST(out + i, y, pred);                                                        \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        for (int32_t i = 0; i < n; i++) {                                                     \
            const int32_t x =                                                                 \
                (a[i * a_step] + p->input1_offset) * (b[i * b_step] + p->input2_offset);      \
            const int32_t v = mb_requantize_fast(x, p->output_multiplier, p->output_shift) + zp;\
            out[i] = (T)(v < lo ? lo : (v > hi ? hi : v));                                    \
        }                                                                                     \
    }

MUL_ROW_MVE(mul_row_any_mve, int8_t, vldrbq_z_s32, vstrbq_p_s32)

static void mul_row_mve(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                        int32_t b_step, int8_t *out, int32_t n)
{
    const mb_mul_s8_params *p = (const mb_mul_s8_params *)params;
    if (a_step == 1 && b_step == 1) {
        if (p->output_shift > 0) {
            mul_run_s8(p, a, b, out, n, 1);
        } else {
            mul_run_s8(p, a, b, out, n, 0);
        }
        return;
    }
    mul_row_any_mve(params, a, a_step, b, b_step, out, n);
}
MUL_ROW_MVE(mul_row_mve_s16, int16_t, vldrhq_z_s32, vstrhq_p_s32)

void mb_mul_s8_mve(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, mul_row_mve, params);
}

/* 16x8 MUL, variant "mve_s16": the same lanes with halfword loads and stores. */
void mb_mul_s16_mve(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, mul_row_mve_s16, params);
}

#else
typedef int mb_mul_mve_unused;
#endif
