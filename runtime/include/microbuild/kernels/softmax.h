/* Int8 SOFTMAX (output scale 1/256, zero point -128), bit-exact with TFLM's integer softmax
 * (reference_ops::Softmax<int8_t, int8_t>).
 *
 * Per row: the difference to the row maximum is scaled by beta * input_scale into a Q5.26 value
 * (input_multiplier, input_left_shift, computed at compile time); exp() of it is gemmlowp's
 * fixed-point exp on negative values; the sum of exps (Q12.19) is inverted with gemmlowp's
 * Newton-Raphson reciprocal; differences below diff_min contribute nothing and give -128. */
#ifndef MICROBUILD_KERNELS_SOFTMAX_H
#define MICROBUILD_KERNELS_SOFTMAX_H

#include <stdint.h>

typedef struct {
    int32_t rows;              /* product of all dimensions but the last */
    int32_t depth;             /* the last dimension: softmax runs along it */
    int32_t input_multiplier;  /* Q31 */
    int32_t input_left_shift;  /* >= 0 */
    int32_t diff_min;          /* <= 0 */
} mb_softmax_s8_params;

/* input and output may be the same buffer: each element is read before it is written. */
void mb_softmax_s8(const mb_softmax_s8_params *params, const int8_t *input, int8_t *output);

/* The same with an int16 output (scale 1/65536, zero point -32768), as TFLM's int8 -> int16
 * softmax (the keyword-spotting models' last layer). Not in place. */
void mb_softmax_s8_s16(const mb_softmax_s8_params *params, const int8_t *input, int16_t *output);

/* The largest of a row's depth >= 1 int8 values (the fast SOFTMAX and LOG_SOFTMAX kernels),
 * two per iteration. */
static inline int32_t mb_softmax_row_max_s8(const int8_t *x, int32_t depth)
{
    int32_t max = x[0];
    int32_t c = 1;
    for (; c + 1 < depth; c += 2) {
        const int32_t a = x[c];
        const int32_t b = x[c + 1];
        max = a > max ? a : max;
        max = b > max ? b : max;
    }
    if (c < depth && x[c] > max) {
        max = x[c];
    }
    return max;
}

/* The SOFTMAX variant "fast" (softmax_fast.c), int8 input with an int8 or int16 output: the
 * compiler tabulates exp() of every difference d = max - x that can matter (0 <= d < table_len =
 * min(256, 1 - diff_min)) as the reference computes it (Q0.31); the device looks them up, sums
 * them as Q12.19 terms, inverts the sum once per row (mb_softmax_reciprocal) and scales each. */
typedef struct {
    int32_t rows;
    int32_t depth;
    int32_t table_len;
    int32_t out_bits;  /* 8: int8 output; 16: int16 output */
} mb_softmax_s8_fast_params;

void mb_softmax_s8_fast(const mb_softmax_s8_fast_params *params, const int32_t *table,
                        const int8_t *input, void *output);

/* TFLM's GetReciprocal (softmax.c): 1 / sum for a Q12.19 sum of exps, as a Q0.31 value and the
 * number of bits the sum has over one. */
int32_t mb_softmax_reciprocal(int32_t sum_of_exps, int *num_bits_over_unit);

/* Int8 LOG_SOFTMAX along the last axis (output scale 16/256, zero point 127), bit-exact with
 * TFLM's LogSoftmaxQuantized: the same Q5.26 differences and exp() as SOFTMAX, their sum's log
 * (TFLite's log_x_for_x_greater_than_or_equal_to_1) subtracted from each difference. Differences
 * at or below the larger of diff_min - 1 and the log's own limit (the largest magnitude a Q5.26
 * value minus the log can hold, scaled back to input steps by reverse_scaling_divisor/shift)
 * give -128. A row is read whole before it is written: output may be input. */
typedef struct {
    int32_t rows;
    int32_t depth;
    int32_t input_multiplier;        /* Q31 */
    int32_t input_left_shift;        /* >= 0 */
    int32_t reverse_scaling_divisor; /* Q31 */
    int32_t reverse_scaling_shift;   /* <= 0 */
    int32_t diff_min;                /* <= 0 */
} mb_log_softmax_s8_params;

void mb_log_softmax_s8(const mb_log_softmax_s8_params *params, const int8_t *input,
                       int8_t *output);

/* TFLite's log(x) for x >= 1, x in Q12.19 and the result in Q5.26 (softmax.c; the LOG_SOFTMAX
 * kernels' log of the sum of exps). */
int32_t mb_softmax_log_q12_to_q5(int32_t x);

/* The LOG_SOFTMAX variant "fast" (log_softmax_fast.c): the compiler tabulates, for every
 * difference d = max - x that can matter (0 <= d < table_len = min(256, 1 - diff_min)), the
 * input rescaled to Q5.26 (table[2d]) and its exp() as a Q12.19 term of the sum (table[2d + 1]);
 * the device only looks them up. */
typedef struct {
    int32_t rows;
    int32_t depth;
    int32_t table_len;
    int32_t reverse_scaling_divisor; /* Q31 */
    int32_t reverse_scaling_shift;   /* <= 0 */
    int32_t diff_min;                /* <= 0 */
} mb_log_softmax_s8_fast_params;

void mb_log_softmax_s8_fast(const mb_log_softmax_s8_fast_params *params, const int32_t *table,
                            const int8_t *input, int8_t *output);

/* Int16 -> int16 SOFTMAX (16x8 models; output scale 1/32768, zero point 0), bit-exact with TFLM's
 * reference_ops::SoftmaxInt16. Per row: each difference to the row maximum is rescaled (Q31
 * multiplier and shift, beta * input_scale / (10 / 65535)) so that [-65535, 0] spans exp's
 * table range [-10, 0], recentred to int16 and looked up in mb_softmax16_exp_table with linear
 * interpolation (512 segments of 128); the sum of those Q0.15 values is normalized by its leading
 * zeros and inverted through mb_softmax16_reciprocal_table (1 / (1 + x), the same interpolation);
 * each exp value times the reciprocal, shifted back, is the output, clamped to [0, 32767]. The
 * tables are TFLM's, generated by tools/make_softmax16_tables.py.
 *
 * input and output may be the same buffer: each element is read before it is written. */
#define MB_SOFTMAX16_LUT_SIZE 513

extern const int16_t mb_softmax16_exp_table[MB_SOFTMAX16_LUT_SIZE];
extern const int16_t mb_softmax16_reciprocal_table[MB_SOFTMAX16_LUT_SIZE];

typedef struct {
    int32_t rows;              /* product of all dimensions but the last */
    int32_t depth;             /* the last dimension, at most 65535 (the sum fits int32) */
    int32_t input_multiplier;  /* Q31 */
    int32_t input_shift;       /* > 0 shifts left */
} mb_softmax_s16_params;

void mb_softmax_s16(const mb_softmax_s16_params *params, const int16_t *input, int16_t *output);

/* The same, variant "fast" (softmax16_fast.c), for |input_shift| <= 14. */
void mb_softmax_s16_fast(const mb_softmax_s16_params *params, const int16_t *input,
                         int16_t *output, void *scratch);
/* Variant "dsp" (softmax16_dsp.c, Arm DSP extension), the same conditions. */
void mb_softmax_s16_dsp(const mb_softmax_s16_params *params, const int16_t *input,
                        int16_t *output, void *scratch);

#endif
