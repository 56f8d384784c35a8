#include "microbuild/kernels/maximum_minimum.h"

#include <stddef.h>

/* TFLM's MaximumOp: el1 > el2 ? el1 : el2; MinimumOp: el1 < el2 ? el1 : el2. */
#define MB_MAXMIN_ROW(NAME, T, CMP)                                                              \
    static void NAME(const void *params, const T *a, int32_t a_step, const T *b, int32_t b_step, \
                     T *out, int32_t n)                                                          \
    {                                                                                            \
        (void)params;                                                                            \
        for (int32_t i = 0; i < n; i++) {                                                        \
            const T x = a[i * a_step];                                                           \
            const T y = b[i * b_step];                                                           \
            out[i] = x CMP y ? x : y;                                                            \
        }                                                                                        \
    }

MB_MAXMIN_ROW(maximum_row_s8, int8_t, >)
MB_MAXMIN_ROW(minimum_row_s8, int8_t, <)
MB_MAXMIN_ROW(maximum_row_s16, int16_t, >)
MB_MAXMIN_ROW(minimum_row_s16, int16_t, <)

void mb_maximum_s8(const mb_broadcast_shape *shape, const int8_t *input1, const int8_t *input2,
                   int8_t *output)
{
    mb_broadcast_binary_s8(shape, input1, input2, output, maximum_row_s8, NULL);
}

void mb_minimum_s8(const mb_broadcast_shape *shape, const int8_t *input1, const int8_t *input2,
                   int8_t *output)
{
    mb_broadcast_binary_s8(shape, input1, input2, output, minimum_row_s8, NULL);
}

void mb_maximum_s16(const mb_broadcast_shape *shape, const int16_t *input1,
                    const int16_t *input2, int16_t *output)
{
    mb_broadcast_binary_s16(shape, input1, input2, output, maximum_row_s16, NULL);
}

void mb_minimum_s16(const mb_broadcast_shape *shape, const int16_t *input1,
                    const int16_t *input2, int16_t *output)
{
    mb_broadcast_binary_s16(shape, input1, input2, output, minimum_row_s16, NULL);
}
