/* PRELU, portable C variants "fast" (int8) and "fast_s16" (int16 input, alpha widened to int16 at
 * compile time): the reference's arithmetic (prelu.c) with quant_fast.h's requantization, the
 * parameters held in locals (the stores could alias them, which would reload them per element)
 * and the operands walked by pointer. Exact: both multipliers are positive Q31 values
 * (QuantizeMultiplier of positive scale ratios), the condition quant_fast.h's argument needs, and
 * prelu.py refuses left shifts that would overflow, as the reference's would. */
#include "microbuild/kernels/prelu.h"

#include "microbuild/quant_fast.h"

/* One row for element type T; a stride-0 operand is one value for the whole run. */
#define PRELU_ROW_FAST(NAME, T, LO, HI)                                                       \
    static void NAME(const void *params, const T *a, int32_t a_step, const T *b,              \
                     int32_t b_step, T *out, int32_t n)                                       \
    {                                                                                         \
        const mb_prelu_params *p = (const mb_prelu_params *)params;                           \
        const int32_t in_off = p->input_offset;                                               \
        const int32_t alpha_off = p->alpha_offset;                                            \
        const int32_t zp = p->output_offset;                                                  \
        const int32_t m1 = p->output_multiplier_1;                                            \
        const int32_t s1 = p->output_shift_1;                                                 \
        const int32_t m2 = p->output_multiplier_2;                                            \
        const int32_t s2 = p->output_shift_2;                                                 \
        for (int32_t i = 0; i < n; i++, a += a_step, b += b_step) {                           \
            const int32_t x = *a + in_off;                                                    \
            const int32_t v = (x >= 0 ? mb_requantize_fast(x, m1, s1)                         \
                                      : mb_requantize_fast(x * (*b + alpha_off), m2, s2)) +   \
                              zp;                                                             \
            out[i] = (T)(v < (LO) ? (LO) : (v > (HI) ? (HI) : v));                            \
        }                                                                                     \
    }

PRELU_ROW_FAST(prelu_row_fast, int8_t, INT8_MIN, INT8_MAX)
PRELU_ROW_FAST(prelu_row_fast_s16, int16_t, INT16_MIN, INT16_MAX)

void mb_prelu_s8_fast(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                      const int8_t *input, const int8_t *alpha, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input, alpha, output, prelu_row_fast, params);
}

void mb_prelu_s16_fast(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                       const int16_t *input, const int16_t *alpha, int16_t *output,
                       void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input, alpha, output, prelu_row_fast_s16, params);
}
