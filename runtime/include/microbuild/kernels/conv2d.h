/* Int8 CONV_2D (NHWC input, OHWI filter), bit-exact with TFLM's
 * reference_integer_ops::ConvPerChannel.
 *
 * Each output is sum(filter * (input - input_zero_point)) + bias in int32, scaled by its channel's
 * Q31 multiplier and shift (TFLM's double rounding), offset by the output zero point and clamped
 * to the fused activation's range. Per-tensor filters use the same per-channel arrays with every
 * entry equal, as TFLM does. Taps that fall in the padding are skipped, which is the same as
 * reading the input zero point there.
 *
 * The sum is regrouped (exactly, in int32) as sum(filter * input) + input_offset * sum(filter
 * over the taps inside the input) + bias. For an output pixel whose window lies wholly inside the
 * input, the last two terms are one constant per channel computed at compile time
 * (interior_bias), so the inner loop is a pure int8 x int8 dot product over contiguous memory;
 * pixels on the border add input_offset times the sum of their valid taps.
 *
 * Grouped convolution: the filter's input depth (filter_c) divides the input depth; output
 * channel o belongs to group g = o / (output_c / groups) and reads input channels
 * [g * filter_c, (g + 1) * filter_c).
 *
 * Residual epilogue: with a non-NULL `residual`, each requantized, clamped conv value c (exactly
 * what the conv alone would write) is combined with residual->other at the same index by ADD's
 * arithmetic (mb_add_s8_one(add, c, other[i])) and that is written instead. `output` may be
 * `residual->other` itself: element i of other is read once, right before output i is written. */
#ifndef MICROBUILD_KERNELS_CONV2D_H
#define MICROBUILD_KERNELS_CONV2D_H

#include <stdint.h>

#include "microbuild/kernels/add.h"

typedef struct {
    int32_t batches;
    int32_t input_h, input_w, input_c;
    int32_t filter_h, filter_w, filter_c; /* filter_c: input channels per group */
    int32_t output_h, output_w, output_c;
    int32_t stride_h, stride_w;
    int32_t dilation_h, dilation_w;
    int32_t pad_top, pad_left;            /* SAME padding before the first row / column */
    int32_t input_offset;                 /* minus the input zero point */
    int32_t output_offset;                /* the output zero point */
    int32_t activation_min, activation_max;
} mb_conv2d_s8_params;

/* A fused ADD after the conv: output = ADD(conv value, other), with the conv value as ADD's
 * input 1 (the compiler swaps the ADD's input parameters when the conv fed its input 2). */
typedef struct {
    const mb_add_s8_params *add;
    const int8_t *other;  /* same shape as the output */
} mb_residual_add_s8;

/* bias may be NULL (no bias input). interior_bias, multipliers and shifts have output_c entries:
 * interior_bias[o] = bias[o] + input_offset * sum(filter[o]); shift > 0 is a left shift.
 * residual may be NULL (a plain conv). */
void mb_conv2d_s8(const mb_conv2d_s8_params *params, const int8_t *input, const int8_t *filter,
                  const int32_t *bias, const int32_t *interior_bias, const int32_t *multipliers,
                  const int32_t *shifts, const mb_residual_add_s8 *residual, int8_t *output);

/* Variant grouped (conv2d_grouped.c, portable; two groups or more): the reference's arguments
 * (it reads bias, not interior_bias) plus an unused scratch pointer. */
void mb_conv2d_s8_grouped(const mb_conv2d_s8_params *params, const int8_t *input,
                          const int8_t *filter, const int32_t *bias,
                          const int32_t *interior_bias, const int32_t *multipliers,
                          const int32_t *shifts, const mb_residual_add_s8 *residual,
                          int8_t *output, void *scratch);

/* 16x8 CONV_2D (conv2d_s16.c): int16 activations with zero point 0 (params' offsets are 0),
 * int8 filters, an int64 bias or NULL, bit-exact with TFLM's int16 reference (int64 sums). */
void mb_conv2d_s16(const mb_conv2d_s8_params *params, const int16_t *input, const int8_t *filter,
                   const int64_t *bias, const int32_t *multipliers, const int32_t *shifts,
                   int16_t *output);

/* 16x8 variant dsp_s16 (conv2d_s16_dsp.c, Arm DSP; one group): the same arguments plus scratch
 * for 2 pixels' int16 window columns; the filter widened to int16 and arranged in channel pairs
 * (conv2d.py, _arrange_s16_dsp). */
void mb_conv2d_s16_dsp(const mb_conv2d_s8_params *params, const int16_t *input,
                       const int8_t *filter, const int64_t *bias, const int32_t *multipliers,
                       const int32_t *shifts, int16_t *output, void *scratch);

/* 16x8 variant mve_s16 (conv2d_s16_mve.c, Helium; one group): the same arguments, 2 pixels'
 * int16 window columns in scratch, the int8 filter as one row per channel padded to a multiple
 * of 8 taps (conv2d.py, _arrange_s16_mve). */
void mb_conv2d_s16_mve(const mb_conv2d_s8_params *params, const int16_t *input,
                       const int8_t *filter, const int64_t *bias, const int32_t *multipliers,
                       const int32_t *shifts, int16_t *output, void *scratch);

/* ---- Kernel variants: the same arguments (and bytes out) plus the op's scratch area, with the
 * filter arranged at compile time by microbuild/compiler/ops/conv2d.py. One group only (any
 * dilation: the column gathers the dilated taps). Every pixel is computed as sum(filter * column) + interior_bias over an im2col
 * column whose padding taps hold the input zero point; `bias` is not read. */

/* Portable C (conv2d_gemm.c): im2col + GEMM, 2 pixels x 4 channels per inner loop. */
void mb_conv2d_s8_gemm(const mb_conv2d_s8_params *params, const int8_t *input,
                       const int8_t *filter, const int32_t *bias, const int32_t *interior_bias,
                       const int32_t *multipliers, const int32_t *shifts,
                       const mb_residual_add_s8 *residual, int8_t *output, void *scratch);

/* Arm DSP extension (conv2d_dsp.c, compiles to nothing elsewhere): int16 columns in scratch,
 * SMLAD on the int8 filter widened by SXTB16, 2 pixels x 2 channels per inner loop. */
void mb_conv2d_s8_dsp(const mb_conv2d_s8_params *params, const int8_t *input,
                      const int8_t *filter, const int32_t *bias, const int32_t *interior_bias,
                      const int32_t *multipliers, const int32_t *shifts,
                      const mb_residual_add_s8 *residual, int8_t *output, void *scratch);

/* Arm DSP extension with the filter widened to int16 at compile time (conv2d_dsp.c): fewer
 * instructions per multiply-accumulate for twice the filter's flash. */
void mb_conv2d_s8_dsp16(const mb_conv2d_s8_params *params, const int8_t *input,
                        const int8_t *filter, const int32_t *bias, const int32_t *interior_bias,
                        const int32_t *multipliers, const int32_t *shifts,
                        const mb_residual_add_s8 *residual, int8_t *output, void *scratch);

/* Helium (conv2d_mve.c, compiles to nothing elsewhere): VMLADAVA.S8 on int8 columns padded to
 * 16 taps, blocks of 4 pixels x 4 channels. interior_bias carries, after its output_c values
 * (rounded up to 4), a 16-int32 requantization table per block of 4 channels (conv2d.py
 * with_mve_tables); multipliers and shifts are not read. */
void mb_conv2d_s8_mve(const mb_conv2d_s8_params *params, const int8_t *input,
                      const int8_t *filter, const int32_t *bias, const int32_t *interior_bias,
                      const int32_t *multipliers, const int32_t *shifts,
                      const mb_residual_add_s8 *residual, int8_t *output, void *scratch);

#endif
