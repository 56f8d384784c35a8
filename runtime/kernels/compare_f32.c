#include "microbuild/kernels/compare_f32.h"

/* One row function per comparison, so the per-element loop has no switch in it. */
#define MB_COMPARE_F32_ROW(NAME, EXPR)                                                           \
    static void NAME(const void *params, const float *a, int32_t a_step, const float *b,       \
                     int32_t b_step, uint8_t *out, int32_t n)                                  \
    {                                                                                           \
        (void)params;                                                                           \
        for (int32_t i = 0; i < n; i++) {                                                       \
            const float x = a[i * a_step];                                                      \
            const float y = b[i * b_step];                                                      \
            out[i] = (uint8_t)(EXPR);                                                           \
        }                                                                                       \
    }

MB_COMPARE_F32_ROW(equal_row, x == y)
MB_COMPARE_F32_ROW(not_equal_row, x != y)
MB_COMPARE_F32_ROW(less_row, x < y)
MB_COMPARE_F32_ROW(less_equal_row, x <= y)
MB_COMPARE_F32_ROW(greater_row, x > y)
MB_COMPARE_F32_ROW(greater_equal_row, x >= y)

void mb_compare_f32(int32_t comparison, const mb_broadcast_shape *shape, const float *input1,
                    const float *input2, uint8_t *output)
{
    /* Indexed by MB_COMPARE_F32_*. */
    static const mb_binary_row_f32_bool rows[] = {equal_row,   not_equal_row,  less_row,
                                                  less_equal_row, greater_row, greater_equal_row};
    mb_broadcast_binary_f32_bool(shape, input1, input2, output, rows[comparison], 0);
}
