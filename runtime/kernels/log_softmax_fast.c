/* LOG_SOFTMAX int8, variant "fast": TFLM's LogSoftmaxQuantized with the per-value fixed-point
 * exp() and rescaling replaced by a table the compiler computed with the same arithmetic
 * (microbuild/compiler/ops/log_softmax.py): an int8 difference to the row's maximum has at most
 * 256 values. Only the log of each row's sum is computed here, once per row. */
#include "microbuild/kernels/softmax.h"

#include "microbuild/quant.h"

void mb_log_softmax_s8_fast(const mb_log_softmax_s8_fast_params *params, const int32_t *table,
                            const int8_t *input, int8_t *output)
{
    const int32_t depth = params->depth;
    const uint32_t table_len = (uint32_t)params->table_len;
    for (int32_t row = 0; row < params->rows; row++) {
        const int8_t *x = input + row * depth;
        int8_t *y = output + row * depth;
        const int32_t max = mb_softmax_row_max_s8(x, depth);

        uint32_t sum = 0; /* Q12.19, wrapping as TFLM's int32 adds */
        for (int32_t c = 0; c < depth; c++) {
            const uint32_t d = (uint32_t)(max - x[c]);
            if (d < table_len) {
                sum += (uint32_t)table[2 * d + 1];
            }
        }

        const int32_t log_sum = mb_softmax_log_q12_to_q5((int32_t)sum);
        const int32_t rescaled_min = mb_mul_by_quantized_multiplier(
            (int32_t)((uint32_t)log_sum + 0x80000000u), params->reverse_scaling_divisor,
            (int)params->reverse_scaling_shift);
        const int32_t adjusted_diff_min =
            params->diff_min - 1 > rescaled_min ? params->diff_min - 1 : rescaled_min;
        /* diff > adjusted_diff_min, as d = -diff: d < limit (never past the table: the
         * adjusted minimum is at least diff_min - 1). */
        const uint32_t limit = adjusted_diff_min >= 0 ? 0u
                               : (adjusted_diff_min < -(int32_t)table_len
                                      ? table_len : (uint32_t)(-adjusted_diff_min));

        for (int32_t c = 0; c < depth; c++) {
            const uint32_t d = (uint32_t)(max - x[c]);
            int32_t out = INT8_MIN;
            if (d < limit) {
                /* Q5.26 to the output's Q4.3 steps, offset 127 (the reference's arithmetic). */
                out = mb_rounding_divide_by_pot(
                          (int32_t)((uint32_t)table[2 * d] - (uint32_t)log_sum), 22) + INT8_MAX;
                out = out > INT8_MAX ? INT8_MAX : (out < INT8_MIN ? INT8_MIN : out);
            }
            y[c] = (int8_t)out;
        }
    }
}
