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

#endif
