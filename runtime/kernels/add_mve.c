/* ADD, Helium variant "mve" (Cortex-M55/M85): add_portable.c's exact arithmetic (read its
 * comment for why it equals TFLM's) on four int32 lanes.
 *
 * Per lane: VLDRB.S32 widens 4 int8 to int32; (x + offset) * 2^20 is a VMUL and a VADD; VQRDMULH by the
 * multiplier is (2 * a * m + 2^31) >> 32 = (a * m + 2^30) >> 31, the rounding doubling high
 * multiply (it saturates only for INT32_MIN * INT32_MIN, impossible with positive multipliers);
 * VRSHL by -r adds 2^(r-1) and shifts right, after subtracting 1 from negative lanes when r > 0:
 * the rounding right shift, half away from zero. Tails use tail predication (VCTP). Broadcast
 * rows (a stride 0 operand) are rescaled once per run and take the same vector path; other strides
 * go element by element. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/add.h"
#include "microbuild/kernels/sub.h"
#include "microbuild/kernels/add_mve.h"

/* The same arithmetic on one element (scalar broadcast operands, odd strides). */
static inline int32_t add_rescale_1(const mb_add_mve_step *s, int32_t a)
{
    const int32_t h = (int32_t)(((int64_t)a * s->multiplier + ((int64_t)1 << 30)) >> 31);
    const int32_t half = s->right > 0 ? (int32_t)1 << (s->right - 1) : 0;
    return (h + half + ((h >> 31) & s->negative)) >> s->right;
}

static inline int32_t add_input_1(const mb_add_mve_step *s, int32_t x)
{
    return add_rescale_1(s, s->offset + x * s->scale);
}

/* One row for element type T (int8_t or int16_t) loaded with VLD (VLDRB.S32 or VLDRH.S32) and
 * stored with VST: the int8 and the 16x8 rows are the same code but for the memory accesses, so
 * one macro defines both. */
#define ADD_ROW_MVE(NAME, T, VLD, VST, VCOMBINE, SIGN2)                                        \
    static void NAME(const void *params, const T *a, int32_t a_step, const T *b,              \
                     int32_t b_step, T *out, int32_t n)                                       \
    {                                                                                         \
        const mb_add_s8_params *p = (const mb_add_s8_params *)params;                         \
        const mb_add_mve_step s1 = mb_add_mve_make_step(p->input1_offset, p->left_shift,     \
                                                        p->input1_multiplier,                 \
                                                        p->input1_shift);                     \
        const mb_add_mve_step s2 = mb_add_mve_make_step(p->input2_offset, p->left_shift,     \
                                                        p->input2_multiplier,                 \
                                                        p->input2_shift);                     \
        const mb_add_mve_step so = mb_add_mve_make_step(0, 0, p->output_multiplier,          \
                                                        p->output_shift);                     \
        const int32x4_t lo = vdupq_n_s32(p->activation_min);                                  \
        const int32x4_t hi = vdupq_n_s32(p->activation_max);                                  \
        const int32x4_t zp = vdupq_n_s32(p->output_offset);                                   \
        if ((a_step == 1 || a_step == 0) && (b_step == 1 || b_step == 0)) {                   \
            /* A broadcast operand is the same vector all along. */                          \
            const int32x4_t fixed1 = vdupq_n_s32(a_step == 0 ? add_input_1(&s1, a[0]) : 0);  \
            const int32x4_t fixed2 = vdupq_n_s32(b_step == 0 ? add_input_1(&s2, b[0]) : 0);  \
            for (int32_t i = 0; i < n; i += 4) {                                              \
                const mve_pred16_t pred = vctp32q((uint32_t)(n - i));                         \
                const int32x4_t x1 = a_step ? mb_add_mve_input(&s1, VLD(a + i, pred)) : fixed1; \
                const int32x4_t x2 = b_step ? mb_add_mve_input(&s2, VLD(b + i, pred)) : fixed2; \
                int32x4_t y = vaddq_s32(mb_add_mve_rescale(&so, VCOMBINE(x1, x2)), zp);       \
                y = vminq_s32(vmaxq_s32(y, lo), hi);                                          \
                VST(out + i, y, pred);                                                        \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        for (int32_t i = 0; i < n; i++) {                                                     \
            const int32_t sum =                                                               \
                add_input_1(&s1, a[i * a_step]) + SIGN2 * add_input_1(&s2, b[i * b_step]);    \
            const int32_t y = add_rescale_1(&so, sum) + p->output_offset;                     \
            out[i] = (T)(y < p->activation_min ? p->activation_min                            \
                                               : (y > p->activation_max ? p->activation_max   \
                                                                        : y));                \
        }                                                                                     \
    }

ADD_ROW_MVE(add_row_any_mve, int8_t, vldrbq_z_s32, vstrbq_p_s32, vaddq_s32, 1)

/* Both operands contiguous: add_mve.h's loop (the fused residual ADD's), whole groups of 4
 * unpredicated and the input without a right shift rescaled by VQRDMULH alone; the macro's
 * loop, predicated inside, was ~2x the instructions. */
static void add_row_mve(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                        int32_t b_step, int8_t *out, int32_t n)
{
    if (a_step == 1 && b_step == 1) {
        const mb_add_mve add = mb_add_mve_of((const mb_add_s8_params *)params);
        mb_add_mve_elements(&add, a, b, out, n);
        return;
    }
    add_row_any_mve(params, a, a_step, b, b_step, out, n);
}
/* SUB's "mve" and "mve_s16": the same rows subtracting the second rescaled input (add_portable.c
 * says why that, and not a negated multiplier, is exact; the difference has the sum's bounds). */
ADD_ROW_MVE(sub_row_mve, int8_t, vldrbq_z_s32, vstrbq_p_s32, vsubq_s32, -1)

/* 16x8 ADD, variant "mve_s16": the same lanes with VLDRH.S32 / VSTRH.32 and left_shift 15.
 * Exact on any int16 operands: |x + offset| <= 65535, so (x + offset) * 2^15 < 2^31 fits a lane
 * (add_portable.c's 2a form would not: VQRDMULH doubles inside its 64-bit product instead); each
 * rescaled input is at most half that (multipliers <= 0.5), so their sum fits too. */
ADD_ROW_MVE(add_row_any_mve_s16, int16_t, vldrhq_z_s32, vstrhq_p_s32, vaddq_s32, 1)

MB_ADD_MVE_RUN(add_run_s16, int16_t, vldrhq_s32, vldrhq_z_s32, vstrhq_s32, vstrhq_p_s32)

/* add_row_mve's contiguous rows for int16 (mb_add_mve_lanes_of's VMLAS is the macro's VMUL and
 * VADD: the same (x + offset) * 2^15). */
static void add_row_mve_s16(const void *params, const int16_t *a, int32_t a_step,
                            const int16_t *b, int32_t b_step, int16_t *out, int32_t n)
{
    if (a_step == 1 && b_step == 1) {
        const mb_add_mve add = mb_add_mve_of((const mb_add_s8_params *)params);
        if (add.in1.right == 0) {
            add_run_s16(&add, a, b, out, n, 1, 0);
        } else if (add.in2.right == 0) {
            add_run_s16(&add, a, b, out, n, 0, 1);
        } else {
            add_run_s16(&add, a, b, out, n, 0, 0);
        }
        return;
    }
    add_row_any_mve_s16(params, a, a_step, b, b_step, out, n);
}
ADD_ROW_MVE(sub_row_mve_s16, int16_t, vldrhq_z_s32, vstrhq_p_s32, vsubq_s32, -1)

void mb_add_s8_mve(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, add_row_mve, params);
}

void mb_add_s16_mve(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, add_row_mve_s16, params);
}

void mb_sub_s8_mve(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, sub_row_mve, params);
}

void mb_sub_s16_mve(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, sub_row_mve_s16, params);
}

#else
typedef int mb_add_mve_unused;
#endif
