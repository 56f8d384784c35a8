/* The comparisons' "keys" variants: every int8 value's rescaling looked up as its rank among both
 * inputs' rescaled values (tables built by the compiler, microbuild/compiler/ops/comparisons.py),
 * so an element costs two table loads and one compare. Same results as comparisons.c. */
#include "microbuild/kernels/comparisons.h"

#define MB_COMPARISON_KEYS(NAME, CMP)                                                            \
    static void NAME##_row(const void *params, const int8_t *a, int32_t a_step, const int8_t *b, \
                           int32_t b_step, uint8_t *out, int32_t n)                              \
    {                                                                                            \
        const mb_comparison_keys *k = (const mb_comparison_keys *)params;                        \
        const uint16_t *k1 = k->keys1;                                                           \
        const uint16_t *k2 = k->keys2;                                                           \
        if (a_step == 1 && b_step == 1) {                                                        \
            for (int32_t i = 0; i < n; i++) {                                                    \
                out[i] = (uint8_t)(k1[(uint8_t)a[i]] CMP k2[(uint8_t)b[i]]);                     \
            }                                                                                    \
        } else if (b_step == 0) {                                                                \
            const uint32_t y = k2[(uint8_t)b[0]];                                                \
            for (int32_t i = 0; i < n; i++) {                                                    \
                out[i] = (uint8_t)((uint32_t)k1[(uint8_t)a[i * a_step]] CMP y);                  \
            }                                                                                    \
        } else if (a_step == 0) {                                                                \
            const uint32_t x = k1[(uint8_t)a[0]];                                                \
            for (int32_t i = 0; i < n; i++) {                                                    \
                out[i] = (uint8_t)(x CMP (uint32_t)k2[(uint8_t)b[i * b_step]]);                  \
            }                                                                                    \
        } else {                                                                                 \
            for (int32_t i = 0; i < n; i++) {                                                    \
                out[i] = (uint8_t)(k1[(uint8_t)a[i * a_step]] CMP k2[(uint8_t)b[i * b_step]]);   \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    void NAME(const mb_comparison_keys *keys, const mb_broadcast_shape *shape,                   \
              const int8_t *input1, const int8_t *input2, uint8_t *output)                       \
    {                                                                                            \
        mb_broadcast_binary_s8_bool(shape, input1, input2, output, NAME##_row, keys);            \
    }

MB_COMPARISON_KEYS(mb_equal_s8_keys, ==)
MB_COMPARISON_KEYS(mb_not_equal_s8_keys, !=)
MB_COMPARISON_KEYS(mb_less_s8_keys, <)
MB_COMPARISON_KEYS(mb_less_equal_s8_keys, <=)
MB_COMPARISON_KEYS(mb_greater_s8_keys, >)
MB_COMPARISON_KEYS(mb_greater_equal_s8_keys, >=)
