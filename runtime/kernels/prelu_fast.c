/* PRELU, portable C variants "fast" (int8) and "fast_s16" (int16 input, alpha widened to int16 at
 * compile time): the reference's arithmetic (prelu.c) with quant_fast.h's requantization, the
 * parameters held in locals (the stores could alias them, which would reload them per element)
 * and the operands walked by pointer. Exact: both multipliers are positive Q31 values
 * (QuantizeMultiplier of positive scale ratios), the condition quant_fast.h's argument needs, and
 * prelu.py refuses left shifts that would overflow, as the reference's would. Where the core
 * has SMMULR, quant_small.h's form of the same step (below). */
#include "microbuild/kernels/prelu.h"

#include "microbuild/quant_fast.h"
#include "microbuild/quant_small.h"

/* On cores with SMMULR (quant_small.h), the rows whose multipliers fit its bounds rescale with it
 * (int8: x has 8 bits, x * alpha 16; an int16 product can reach 2^30 and never fits, and SMMULR
 * for x alone there made the row slower). */
#if defined(MB_SMALL_SCALE_DSP)
#define PRELU_ROW_SMALL(T, ALPHA_BITS)                                                        \
    mb_small_scale k1, k2;                                                                    \
    if ((ALPHA_BITS) <= 16 && mb_small_scale_of(m1, s1, 8 * (int)sizeof(T), &k1) &&           \
        mb_small_scale_of(m2, s2, (ALPHA_BITS), &k2)) {                                       \
        for (int32_t i = 0; i < n; i++, a += a_step, b += b_step) {                           \
            const int32_t x = *a + in_off;                                                    \
            const int32_t v = (x >= 0 ? mb_small_scale_apply(x, &k1)                          \
                                      : mb_small_scale_apply(x * (*b + alpha_off), &k2)) +    \
                              zp;                                                             \
            out[i] = (T)__ssat(v, 8 * (int)sizeof(T));                                        \
        }                                                                                     \
        return;                                                                               \
    }
#else
#define PRELU_ROW_SMALL(T, ALPHA_BITS)
#endif

/* One row for element type T; a stride-0 operand is one value for the whole run. */
#define PRELU_ROW_FAST(NAME, T, LO, HI, ALPHA_BITS)                                           \
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
        PRELU_ROW_SMALL(T, ALPHA_BITS)                                                        \
        for (int32_t i = 0; i < n; i++, a += a_step, b += b_step) {                           \
            const int32_t x = *a + in_off;                                                    \
            const int32_t v = (x >= 0 ? mb_requantize_fast(x, m1, s1)                         \
                                      : mb_requantize_fast(x * (*b + alpha_off), m2, s2)) +   \
                              zp;                                                             \
            out[i] = (T)(v < (LO) ? (LO) : (v > (HI) ? (HI) : v));                            \
        }                                                                                     \
    }

PRELU_ROW_FAST(prelu_row_fast, int8_t, INT8_MIN, INT8_MAX, 16)
PRELU_ROW_FAST(prelu_row_fast_s16, int16_t, INT16_MIN, INT16_MAX, 32)

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
