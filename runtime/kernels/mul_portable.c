/* MUL, portable C variant "fast": the reference's arithmetic (mul.c) with quant_fast.h's
 * requantization (no saturation test, the rounding shift as one add and shift), the parameters
 * held in locals (the int8 stores could alias them, which would reload them per element) and
 * the operands walked by pointer.
 *
 * Exact for every MUL the compiler accepts: the product of the two corrected inputs is at most
 * 255 * 255 < 2^16 in magnitude and the left shift at most 15 (mul.py refuses more), so the
 * shifted product fits int32 as in the reference; the output multiplier is positive Q31, the
 * condition quant_fast.h's argument needs (the reference's one saturating case cannot occur). */
#include "microbuild/kernels/mul.h"

#include "microbuild/quant_fast.h"

/* One row for element type T: the int8 and the 16x8 rows are the same code, so one macro
 * defines both. For int16 operands (zero points 0, mul.py refuses a left shift) the product is
 * at most 2^30 in magnitude: an int32, which mb_requantize_fast takes whole. */
#define MUL_ROW_FAST(NAME, T)                                                                 \
    static void NAME(const void *params, const T *a, int32_t a_step, const T *b,              \
                     int32_t b_step, T *out, int32_t n)                                       \
    {                                                                                         \
        const mb_mul_s8_params *p = (const mb_mul_s8_params *)params;                         \
        const int32_t off1 = p->input1_offset;                                                \
        const int32_t off2 = p->input2_offset;                                                \
        const int32_t multiplier = p->output_multiplier;                                      \
        const int32_t shift = p->output_shift;                                                \
        const int32_t zp = p->output_offset;                                                  \
        const int32_t lo = p->activation_min;                                                 \
        const int32_t hi = p->activation_max;                                                 \
        /* A stride-0 operand is one value for the whole run: step 0 keeps reading it. */    \
        for (int32_t i = 0; i < n; i++, a += a_step, b += b_step) {                           \
            const int32_t v =                                                                 \
                mb_requantize_fast((*a + off1) * (*b + off2), multiplier, shift) + zp;        \
            out[i] = (T)(v < lo ? lo : (v > hi ? hi : v));                                    \
        }                                                                                     \
    }

MUL_ROW_FAST(mul_row_fast, int8_t)
MUL_ROW_FAST(mul_row_fast_s16, int16_t)

void mb_mul_s8_fast(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                    const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, mul_row_fast, params);
}

/* 16x8 MUL, variant "fast_s16": the same row on int16 elements. */
void mb_mul_s16_fast(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                     const int16_t *input1, const int16_t *input2, int16_t *output,
                     void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, mul_row_fast_s16, params);
}
