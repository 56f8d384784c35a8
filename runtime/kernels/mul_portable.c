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

static void mul_row_fast(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                         int32_t b_step, int8_t *out, int32_t n)
{
    const mb_mul_s8_params *p = (const mb_mul_s8_params *)params;
    const int32_t off1 = p->input1_offset;
    const int32_t off2 = p->input2_offset;
    const int32_t multiplier = p->output_multiplier;
    const int32_t shift = p->output_shift;
    const int32_t zp = p->output_offset;
    const int32_t lo = p->activation_min;
    const int32_t hi = p->activation_max;
    /* A stride-0 operand is one value for the whole run: step 0 keeps reading it. */
    for (int32_t i = 0; i < n; i++, a += a_step, b += b_step) {
        const int32_t v = mb_requantize_fast((*a + off1) * (*b + off2), multiplier, shift) + zp;
        out[i] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
    }
}

void mb_mul_s8_fast(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                    const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, mul_row_fast, params);
}
