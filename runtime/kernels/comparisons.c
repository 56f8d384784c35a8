#include "microbuild/kernels/comparisons.h"

#include "microbuild/quant.h"

#define MB_COMPARISON(NAME, CMP)                                                                 \
    static void NAME##_row(const void *params, const int8_t *a, int32_t a_step, const int8_t *b, \
                           int32_t b_step, uint8_t *out, int32_t n)                              \
    {                                                                                            \
        const mb_comparison_s8_params *p = (const mb_comparison_s8_params *)params;              \
        for (int32_t i = 0; i < n; i++) {                                                        \
            const int32_t x = MB_RESCALE_INPUT1(p, a[i * a_step]);                               \
            const int32_t y = MB_RESCALE_INPUT2(p, b[i * b_step]);                               \
            out[i] = (uint8_t)(x CMP y);                                                         \
        }                                                                                        \
    }                                                                                            \
    void NAME(const mb_comparison_s8_params *params, const mb_broadcast_shape *shape,            \
              const int8_t *input1, const int8_t *input2, uint8_t *output)                       \
    {                                                                                            \
        mb_broadcast_binary_s8_bool(shape, input1, input2, output, NAME##_row, params);          \
    }

MB_COMPARISON(mb_equal_s8, ==)
MB_COMPARISON(mb_not_equal_s8, !=)
MB_COMPARISON(mb_less_s8, <)
MB_COMPARISON(mb_less_equal_s8, <=)
MB_COMPARISON(mb_greater_s8, >)
MB_COMPARISON(mb_greater_equal_s8, >=)
