/* SQUARED_DIFFERENCE int16, variant "fast_s16": the reference's arithmetic
 * (squared_difference.c) with quant_fast.h's requantization for each of its three steps (both
 * inputs' rescaling and the square's), the parameters held in locals and a broadcast operand
 * rescaled once per run. Exact: every multiplier is a positive Q31 value (the compiler's), the
 * condition quant_fast.h's argument needs; its left shift wraps as the reference's does.
 *
 * Variant "dsp_s16" (Arm DSP): the inputs' steps as one SMMULR each. An int16 input x (zero
 * point 0, no left shift) doubled fits int32 easily, so the rounding doubling high multiply
 * (x * m + 2^30) >> 31 is SMMULR(2x, m); its result is at most 2^14 in magnitude (multipliers at
 * most 0.5), so the rounding right shift is an add and a shift in 32 bits. The square (up to
 * 2^30, whose double does not fit) keeps quant_fast.h's 64-bit step. */
#include "microbuild/kernels/squared_difference.h"

#include "microbuild/quant_fast.h"

static void row_fast_s16(const void *params, const int16_t *a, int32_t a_step,
                         const int16_t *b, int32_t b_step, int16_t *out, int32_t n)
{
    const mb_squared_difference_params *p = (const mb_squared_difference_params *)params;
    /* int16: zero points 0 and no left shift before the inputs' rescaling (TFLM's). */
    const int32_t m1 = p->input1_multiplier;
    const int32_t s1 = p->input1_shift;
    const int32_t m2 = p->input2_multiplier;
    const int32_t s2 = p->input2_shift;
    const int32_t mo = p->output_multiplier;
    const int32_t so = p->output_shift;
    const int32_t zp = p->output_offset;
    const int32_t lo = p->activation_min;
    const int32_t hi = p->activation_max;
    const int32_t fixed1 = a_step == 0 ? mb_requantize_fast(a[0], m1, s1) : 0;
    const int32_t fixed2 = b_step == 0 ? mb_requantize_fast(b[0], m2, s2) : 0;
    for (int32_t i = 0; i < n; i++) {
        const int32_t x1 = a_step == 0 ? fixed1 : mb_requantize_fast(a[i * a_step], m1, s1);
        const int32_t x2 = b_step == 0 ? fixed2 : mb_requantize_fast(b[i * b_step], m2, s2);
        const int32_t diff = x1 - x2; /* at most 2^15 in magnitude: the square fits int32 */
        const int32_t v = mb_requantize_fast(diff * diff, mo, so) + zp;
        out[i] = (int16_t)(v < lo ? lo : (v > hi ? hi : v));
    }
}

void mb_squared_difference_s16_fast(const mb_squared_difference_params *params,
                                    const mb_broadcast_shape *shape, const int16_t *input1,
                                    const int16_t *input2, int16_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, row_fast_s16, params);
}

#if defined(__ARM_FEATURE_DSP)

#include "microbuild/dsp_words.h"

static inline int32_t input_step(int32_t x, int32_t m, int32_t half, int32_t right)
{
    const int32_t h = mb_smmulr(x * 2, m);
    return (h + half + ((h >> 31) & -(right > 0))) >> right;
}

static void row_dsp_s16(const void *params, const int16_t *a, int32_t a_step, const int16_t *b,
                        int32_t b_step, int16_t *out, int32_t n)
{
    const mb_squared_difference_params *p = (const mb_squared_difference_params *)params;
    const int32_t m1 = p->input1_multiplier;
    const int32_t r1 = -p->input1_shift; /* input shifts are <= 0: multipliers below 1 */
    const int32_t h1 = r1 > 0 ? (int32_t)1 << (r1 - 1) : 0;
    const int32_t m2 = p->input2_multiplier;
    const int32_t r2 = -p->input2_shift;
    const int32_t h2 = r2 > 0 ? (int32_t)1 << (r2 - 1) : 0;
    const int32_t mo = p->output_multiplier;
    const int32_t so = p->output_shift;
    const int32_t zp = p->output_offset;
    const int32_t lo = p->activation_min;
    const int32_t hi = p->activation_max;
    const int32_t fixed1 = a_step == 0 ? input_step(a[0], m1, h1, r1) : 0;
    const int32_t fixed2 = b_step == 0 ? input_step(b[0], m2, h2, r2) : 0;
    for (int32_t i = 0; i < n; i++) {
        const int32_t x1 = a_step == 0 ? fixed1 : input_step(a[i * a_step], m1, h1, r1);
        const int32_t x2 = b_step == 0 ? fixed2 : input_step(b[i * b_step], m2, h2, r2);
        const int32_t diff = x1 - x2;
        const int32_t v = mb_requantize_fast(diff * diff, mo, so) + zp;
        out[i] = (int16_t)(v < lo ? lo : (v > hi ? hi : v));
    }
}

void mb_squared_difference_s16_dsp(const mb_squared_difference_params *params,
                                   const mb_broadcast_shape *shape, const int16_t *input1,
                                   const int16_t *input2, int16_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, row_dsp_s16, params);
}

#endif
