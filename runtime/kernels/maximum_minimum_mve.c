/* MAXIMUM and MINIMUM (int8), Helium variant "mve": sixteen lanes per VMAX.S8 / VMIN.S8,
 * tail-predicated. A lane's max (min) of x and y is x where x > y (x < y) and y elsewhere, which
 * is the same byte where they are equal: TFLM's result. A broadcast operand (stride 0) is one
 * duplicated vector; rows with other strides go one element at a time. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>

#include "microbuild/kernels/maximum_minimum.h"

#define MAXMIN_ROW_MVE(NAME, VOP, CMP)                                                           \
    static void NAME(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,       \
                     int32_t b_step, int8_t *out, int32_t n)                                     \
    {                                                                                            \
        (void)params;                                                                            \
        if ((a_step == 1 || a_step == 0) && (b_step == 1 || b_step == 0)) {                      \
            const int8x16_t fixed_a = vdupq_n_s8(a[0]);                                          \
            const int8x16_t fixed_b = vdupq_n_s8(b[0]);                                          \
            for (int32_t i = 0; i < n; i += 16) {                                                \
                const mve_pred16_t pred = vctp8q((uint32_t)(n - i));                             \
                const int8x16_t x = a_step ? vldrbq_z_s8(a + i, pred) : fixed_a;                 \
                const int8x16_t y = b_step ? vldrbq_z_s8(b + i, pred) : fixed_b;                 \
                vstrbq_p_s8(out + i, VOP(x, y), pred);                                           \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        for (int32_t i = 0; i < n; i++) {                                                        \
            const int8_t x = a[i * a_step];                                                      \
            const int8_t y = b[i * b_step];                                                      \
            out[i] = x CMP y ? x : y;                                                            \
        }                                                                                        \
    }

MAXMIN_ROW_MVE(maximum_row_mve, vmaxq_s8, >)
MAXMIN_ROW_MVE(minimum_row_mve, vminq_s8, <)

void mb_maximum_s8_mve(const mb_broadcast_shape *shape, const int8_t *input1,
                       const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, maximum_row_mve, 0);
}

void mb_minimum_s8_mve(const mb_broadcast_shape *shape, const int8_t *input1,
                       const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, minimum_row_mve, 0);
}

#else
typedef int mb_maximum_minimum_mve_unused;
#endif
