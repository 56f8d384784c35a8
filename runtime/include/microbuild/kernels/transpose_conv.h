/* TRANSPOSE_CONV (NHWC input, OHWI filter), bit-exact with TFLM's
 * reference_integer_ops::TransposeConv.
 *
 * TFLM scatters: every input pixel adds (input + input_offset) * filter into the output pixels
 * its window covers, summing in a scratch buffer the size of the output (int32 for int8
 * activations, int64 for 16x8); then each sum gets its channel's bias, is requantized with the
 * channel's Q31 multiplier and shift, offset by the output zero point (int8 only: int16 has zero
 * point 0) and clamped to the fused activation's range. The kernels here do the same with the
 * scratch area microbuild reserves for the op (scratch must hold output_h * output_w * output_c
 * * batches sums). The compiler refuses filters whose sums could exceed int32, so the int8 sum
 * never overflows whatever the order.
 *
 * pad_top/pad_left are the padding TFLite derives from the *output* size (a convolution from the
 * output back to the input); contributions that land outside the output are dropped. */
#ifndef MICROBUILD_KERNELS_TRANSPOSE_CONV_H
#define MICROBUILD_KERNELS_TRANSPOSE_CONV_H

#include <stdint.h>

typedef struct {
    int32_t batches;
    int32_t input_h, input_w, input_c;
    int32_t filter_h, filter_w;
    int32_t output_h, output_w, output_c;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    int32_t input_offset;   /* minus the input zero point (0 for int16) */
    int32_t output_offset;  /* the output zero point (0 for int16) */
    int32_t activation_min, activation_max;
} mb_transpose_conv_params;

/* bias may be NULL. multipliers and shifts have output_c entries; shift > 0 is a left shift. */
void mb_transpose_conv_s8(const mb_transpose_conv_params *params, const int8_t *input,
                          const int8_t *filter, const int32_t *bias, const int32_t *multipliers,
                          const int32_t *shifts, int8_t *output, int32_t *scratch);

/* 16x8: int16 activations (zero point 0), int8 filter, int64 bias or NULL, int64 sums. */
void mb_transpose_conv_s16(const mb_transpose_conv_params *params, const int16_t *input,
                           const int8_t *filter, const int64_t *bias,
                           const int32_t *multipliers, const int32_t *shifts, int16_t *output,
                           int64_t *scratch);

/* The int8 variants (transpose_conv_scatter.h): the reference kernel's arguments with the filter
 * pre-arranged as int16 [filter_h][filter_w][output_c][input_c rounded up to even], then the
 * variant's scratch (the same area as scratch). "fast": portable C; "dsp": SMLAD (Arm DSP);
 * "mve": VMLADAVA over int16 lanes (Helium). */
void mb_transpose_conv_s8_fast(const mb_transpose_conv_params *params, const int8_t *input,
                               const int8_t *filter, const int32_t *bias,
                               const int32_t *multipliers, const int32_t *shifts, int8_t *output,
                               int32_t *scratch, void *variant_scratch);
void mb_transpose_conv_s8_dsp(const mb_transpose_conv_params *params, const int8_t *input,
                              const int8_t *filter, const int32_t *bias,
                              const int32_t *multipliers, const int32_t *shifts, int8_t *output,
                              int32_t *scratch, void *variant_scratch);
void mb_transpose_conv_s8_mve(const mb_transpose_conv_params *params, const int8_t *input,
                              const int8_t *filter, const int32_t *bias,
                              const int32_t *multipliers, const int32_t *shifts, int8_t *output,
                              int32_t *scratch, void *variant_scratch);

#endif
