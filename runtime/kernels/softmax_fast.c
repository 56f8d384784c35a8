/* SOFTMAX int8 input, variant "fast": TFLM's integer softmax (softmax.c) with the per-value
 * fixed-point exp() replaced by a table the compiler computed with the same arithmetic
 * (microbuild/compiler/ops/softmax.py, softmax_table): an int8 difference to the row's maximum
 * has at most 256 values. Per row only the reciprocal of the sum is computed, once.
 *
 * Each output is the reference's RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(scale,
 * exp), exponent): both factors are non-negative (the reciprocal is positive, exp() at least 0),
 * so the doubling high multiply never saturates and is (scale * exp + 2^30) >> 31 in 64 bits
 * (quant_fast.h's argument); its result is non-negative too, so the rounding shift is an add of
 * half and a shift (unsigned: the sum may pass 2^31). A row whose exponent is 32 or more (int8
 * output, 512 or more values near the maximum) takes the reference's own rounding shift.
 *
 * A term of the sum, exp() as Q12.19 (a rounding shift right by 12 of a non-negative value), is
 * (e >> 12) plus bit 11 of e, which cannot overflow where e + 2^11 could (exp(0) is INT32_MAX). */
#include "microbuild/kernels/softmax.h"

#include "microbuild/quant.h"

void mb_softmax_s8_fast(const mb_softmax_s8_fast_params *params, const int32_t *table,
                        const int8_t *input, void *output)
{
    const int32_t depth = params->depth;
    const uint32_t table_len = (uint32_t)params->table_len;
    const int32_t out_bits = params->out_bits;
    const int32_t out_min = out_bits == 8 ? INT8_MIN : INT16_MIN;
    const int32_t out_max = out_bits == 8 ? INT8_MAX : INT16_MAX;
    int8_t *out8 = (int8_t *)output;
    int16_t *out16 = (int16_t *)output;
    for (int32_t row = 0; row < params->rows; row++) {
        const int8_t *x = input + row * depth;
        const int32_t max = mb_softmax_row_max_s8(x, depth);

        uint32_t sum = 0; /* Q12.19, wrapping as TFLM's int32 adds */
        for (int32_t c = 0; c < depth; c++) {
            const uint32_t d = (uint32_t)(max - x[c]);
            if (d < table_len) {
                const int32_t e = table[d];
                sum += (uint32_t)((e >> 12) + ((e >> 11) & 1));
            }
        }

        int num_bits_over_unit;
        const int32_t scale = mb_softmax_reciprocal((int32_t)sum, &num_bits_over_unit);
        const int32_t exponent = num_bits_over_unit + 31 - out_bits;
        const uint32_t half = exponent > 0 && exponent < 32 ? (uint32_t)1 << (exponent - 1) : 0;

        for (int32_t c = 0; c < depth; c++) {
            const uint32_t d = (uint32_t)(max - x[c]);
            int32_t out = out_min;
            if (d < table_len) {
                const int32_t high =
                    (int32_t)(((int64_t)scale * table[d] + ((int64_t)1 << 30)) >> 31);
                out = (exponent < 32 ? (int32_t)(((uint32_t)high + half) >> exponent)
                                     : mb_rounding_divide_by_pot(high, exponent)) + out_min;
                out = out > out_max ? out_max : out;
            }
            if (out_bits == 8) {
                out8[row * depth + c] = (int8_t)out;
            } else {
                out16[row * depth + c] = (int16_t)out;
            }
        }
    }
}
