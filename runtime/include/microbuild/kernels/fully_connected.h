/* Int8 FULLY_CONNECTED, bit-exact with TFLM's reference_integer_ops::FullyConnected (per-tensor
 * weights) and FullyConnectedPerChannel (per-channel weights).
 *
 * TFLM accumulates sum((w + 0) * (x - input_zero_point)) + bias. Weights are symmetric (zero point
 * 0), so the input zero-point term is folded into the bias at compile time:
 *   bias'[c] = bias[c] - input_zero_point * sum_d w[c][d]
 * and the kernel only sums w * x. The int32 result is the same (the same integers, summed in a
 * different order, without overflow for any depth the compiler accepts). */
#ifndef MICROBUILD_KERNELS_FULLY_CONNECTED_H
#define MICROBUILD_KERNELS_FULLY_CONNECTED_H

#include <stdint.h>

typedef struct {
    int32_t batches;        /* rows of the input: input elements / input_depth */
    int32_t input_depth;    /* weights are [output_depth][input_depth] */
    int32_t output_depth;
    int32_t output_offset;  /* output zero point */
    int32_t activation_min;
    int32_t activation_max;
    /* Per-tensor requantization, used when output_multipliers is NULL. */
    int32_t output_multiplier;
    int32_t output_shift;   /* > 0 shifts left */
    /* Per-channel requantization ([output_depth] each), or NULL. */
    const int32_t *output_multipliers;
    const int32_t *output_shifts;
    /* The dsp and dsp_wide variants only: 3 words per output row (2 * multiplier - 2^32, the
     * rounding offset with the output zero point, right shift + 1; dsp_requant_table in
     * microbuild/compiler/ops/fully_connected.py), in place of the fields above; NULL when the
     * compiler could not prove that short form exact (then the fields above are set). */
    const int32_t *requant;
} mb_fully_connected_s8_params;

/* bias: the folded bias described above, [output_depth], never NULL. */
void mb_fully_connected_s8(const mb_fully_connected_s8_params *params, const int8_t *input,
                           const int8_t *weights, const int32_t *bias, int8_t *output);

/* One band of a FULLY_CONNECTED whose input is produced row band by row band (a row-streamed
 * region, fully_connected_band.c): adds input columns [col0, col0 + cols) (``input`` points at
 * column col0) to ``sums`` ([output_depth] int32 in the workspace), starting from ``bias`` when
 * col0 is 0; the band ending at input_depth writes ``output`` instead. Weights in the model's
 * layout; batches must be 1; params' ``requant`` is not read. */
void mb_fully_connected_s8_band(const mb_fully_connected_s8_params *params, const int8_t *input,
                                const int8_t *weights, int32_t col0, int32_t cols, int32_t *sums,
                                const int32_t *bias, int8_t *output);

/* 16x8 FULLY_CONNECTED (fully_connected_s16.c): int16 input and output with zero point 0, int8
 * weights, an int64 bias (or NULL), bit-exact with TFLM's int16 reference: the sum is int64 and
 * requantized by mb_mul_by_quantized_multiplier_s64. */
typedef struct {
    int32_t batches;
    int32_t input_depth;
    int32_t output_depth;
    int32_t activation_min;
    int32_t activation_max;
    int32_t output_multiplier;  /* per tensor, when output_multipliers is NULL */
    int32_t output_shift;
    const int32_t *output_multipliers;
    const int32_t *output_shifts;
} mb_fully_connected_s16_params;

void mb_fully_connected_s16(const mb_fully_connected_s16_params *params, const int16_t *input,
                            const int8_t *weights, const int64_t *bias, int16_t *output);

/* Variants (microbuild/compiler/ops/fully_connected.py): the same arguments plus the scratch
 * pointer (unused: NULL), the same bytes out. `weights` is pre-arranged at compile time, every
 * group of 4 output rows interleaved in chunks (see each kernel file); the same size as the
 * original, except dsp_wide (int16: twice).
 * rows4: portable C, 4 rows per pass, chunks of 16 bytes (fully_connected_portable.c).
 * dsp:   Arm DSP (SXTB16 + SMLAD), 4 rows per pass, chunks of 4 bytes (fully_connected_dsp.c).
 * dsp_wide: dsp on weights widened to int16 at compile time (twice the bytes; fully_connected_dsp.c).
 * mve:   Helium (VMLADAVA), 4 rows per pass, chunks of 16 bytes (fully_connected_mve.c). */
void mb_fully_connected_s8_rows4(const mb_fully_connected_s8_params *params,
                                 const int8_t *input, const int8_t *weights, const int32_t *bias,
                                 int8_t *output, void *scratch);
void mb_fully_connected_s8_dsp(const mb_fully_connected_s8_params *params, const int8_t *input,
                               const int8_t *weights, const int32_t *bias, int8_t *output,
                               void *scratch);
void mb_fully_connected_s8_dsp_wide(const mb_fully_connected_s8_params *params,
                                 const int8_t *input, const int8_t *weights, const int32_t *bias,
                                 int8_t *output, void *scratch);
void mb_fully_connected_s8_mve(const mb_fully_connected_s8_params *params, const int8_t *input,
                               const int8_t *weights, const int32_t *bias, int8_t *output,
                               void *scratch);

/* 16x8 variant: dsp_s16: Arm DSP (SXTB16 + SMLALD into int64), 4 rows per pass, the layout of
 * dsp with every whole 4-byte chunk stored w0 w2 w1 w3 (fully_connected_s16_dsp.c). */
void mb_fully_connected_s16_dsp(const mb_fully_connected_s16_params *params,
                                const int16_t *input, const int8_t *weights, const int64_t *bias,
                                int16_t *output, void *scratch);

#endif
