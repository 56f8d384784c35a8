/* Reductions over any set of axes, bit-exact with TFLM: REDUCE_MAX and REDUCE_MIN on int8 (raw
 * values: TFLM requires input and output to be quantized alike) and ARG_MAX / ARG_MIN of int8
 * values as int32 indices (the first index wins a tie, as TFLM's strict comparison gives).
 * SUM shares MEAN's kernel (microbuild/kernels/mean.h): TFLM computes both with
 * QuantizedMeanOrSum and only the multiplier differs.
 *
 * The input is described at compile time as two groups of dimensions with their input strides:
 * the kept ones, in order (which is also the output's order), and the reduced ones. Every output
 * element walks its reduced group with mb_reduce_step, which MEAN and SUM use too. */
#ifndef MICROBUILD_KERNELS_REDUCE_H
#define MICROBUILD_KERNELS_REDUCE_H

#include <stdint.h>

#define MB_REDUCE_MAX_DIMS 6

typedef struct {
    int32_t kept_count;
    int32_t kept_dims[MB_REDUCE_MAX_DIMS];
    int32_t kept_strides[MB_REDUCE_MAX_DIMS];     /* in input elements */
    int32_t reduced_count;
    int32_t reduced_dims[MB_REDUCE_MAX_DIMS];
    int32_t reduced_strides[MB_REDUCE_MAX_DIMS];  /* ARG_MAX/ARG_MIN: exactly one reduced axis */
} mb_reduce_params;

/* Advance the multi-index idx over dims[0..count) (last fastest) and return the change of the
 * input offset; *done is set once the index wraps around to all zeros (at once when count is
 * 0: a group of no dimensions has one position). */
int32_t mb_reduce_step(int32_t *idx, const int32_t *dims, const int32_t *strides, int32_t count,
                       int *done);

void mb_reduce_max_s8(const mb_reduce_params *params, const int8_t *input, int8_t *output);
void mb_reduce_min_s8(const mb_reduce_params *params, const int8_t *input, int8_t *output);
void mb_arg_max_s8(const mb_reduce_params *params, const int8_t *input, int32_t *output);
void mb_arg_min_s8(const mb_reduce_params *params, const int8_t *input, int32_t *output);

/* The int8 ARG_MAX / ARG_MIN variants (arg_fast.c, arg_dsp.c) and the float32 kernel
 * (arg_f32.c): the input as [outer][size][inner], size along the reduced axis, inner its stride;
 * the output [outer][inner]. */
typedef struct {
    int32_t outer;
    int32_t size;
    int32_t inner;
} mb_arg_walk_params;

void mb_arg_max_s8_fast(const mb_arg_walk_params *params, const int8_t *input,
                        int32_t *output);
void mb_arg_min_s8_fast(const mb_arg_walk_params *params, const int8_t *input,
                        int32_t *output);
/* Variant "dsp" (arg_dsp.c, Arm DSP extension): size <= 256. */
void mb_arg_max_s8_dsp(const mb_arg_walk_params *params, const int8_t *input,
                       int32_t *output);
void mb_arg_min_s8_dsp(const mb_arg_walk_params *params, const int8_t *input,
                       int32_t *output);

#endif
