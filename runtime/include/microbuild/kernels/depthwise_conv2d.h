/* Int8 DEPTHWISE_CONV_2D (NHWC input, 1HWO filter), bit-exact with TFLM's
 * reference_integer_ops::DepthwiseConvPerChannel.
 *
 * Output channel o = c * depth_multiplier + m filters input channel c alone:
 * sum(filter[., ., o] * (input[., ., c] - input_zero_point)) + bias[o] in int32, then the
 * channel's Q31 multiplier and shift (TFLM's double rounding), the output zero point and the fused
 * activation's clamp. Taps in the padding are skipped.
 *
 * For an output pixel whose taps all lie inside the input, the input-offset term is folded at
 * compile time into interior_bias[o] = bias[o] + input_offset * sum of channel o's filter taps,
 * so the kernel sums plain filter * input products there (the same int32 result: the same
 * integers summed in another order, and the compiler checks the sums stay in int32). */
#ifndef MICROBUILD_KERNELS_DEPTHWISE_CONV2D_H
#define MICROBUILD_KERNELS_DEPTHWISE_CONV2D_H

#include <stdint.h>

typedef struct {
    int32_t batches;
    int32_t input_h, input_w, input_c;
    int32_t filter_h, filter_w;
    int32_t depth_multiplier;             /* output_c = input_c * depth_multiplier */
    int32_t output_h, output_w;
    int32_t stride_h, stride_w;
    int32_t dilation_h, dilation_w;
    int32_t pad_top, pad_left;
    int32_t input_offset;                 /* minus the input zero point */
    int32_t output_offset;                /* the output zero point */
    int32_t activation_min, activation_max;
} mb_depthwise_conv2d_s8_params;

/* bias (zeros when the model has none), interior_bias, multipliers and shifts have
 * input_c * depth_multiplier entries; none is NULL. */
/* 16x8 DEPTHWISE_CONV_2D (conv2d_s16.c): as mb_conv2d_s16, filter [1, h, w, output_c]. */
void mb_depthwise_conv2d_s16(const mb_depthwise_conv2d_s8_params *params, const int16_t *input,
                             const int8_t *filter, const int64_t *bias,
                             const int32_t *multipliers, const int32_t *shifts, int16_t *output);

/* 16x8 variant fast_s16 (depthwise_conv2d_s16_fast.c, portable): windows clipped once per pixel,
 * int32 sums (at most 511 taps); scratch for 16 bytes per output channel. */
void mb_depthwise_conv2d_s16_fast(const mb_depthwise_conv2d_s8_params *params,
                                  const int16_t *input, const int8_t *filter,
                                  const int64_t *bias, const int32_t *multipliers,
                                  const int32_t *shifts, int16_t *output, void *scratch);

void mb_depthwise_conv2d_s8(const mb_depthwise_conv2d_s8_params *params, const int8_t *input,
                            const int8_t *filter, const int32_t *bias,
                            const int32_t *interior_bias, const int32_t *multipliers,
                            const int32_t *shifts, int8_t *output);

/* Kernel variants (microbuild/compiler/ops/depthwise_conv2d.py): the reference's arguments, then
 * the op's scratch area. All three take depth multiplier 1 and dilation 1 only and give the
 * reference's bytes.
 *
 * "portable" (any CPU): channels innermost, 4 int32 accumulators per block; no scratch, weights
 * as stored. */
void mb_depthwise_conv2d_s8_portable(const mb_depthwise_conv2d_s8_params *params,
                                     const int8_t *input, const int8_t *filter,
                                     const int32_t *bias, const int32_t *interior_bias,
                                     const int32_t *multipliers, const int32_t *shifts,
                                     int8_t *output, void *scratch);

/* "dsp" (Arm v7E-M DSP: Cortex-M4/M7/M33/M55): blocks of 4 channels, outermost; the input rows a
 * block needs are widened once into int16 pairs of adjacent pixels and the taps, scaled by the
 * left shift, into matching pairs, so SMLAD multiplies two taps; the 3x3 rows run in an assembly
 * loop. Weights as stored. Only on instances whose accumulators (times 2^(left shift + 1)) stay
 * below 2^28, whose left shifts are at most 7 and whose right shifts at most 22 (checked at
 * compile time), for its SMMULR-based requantization. */
void mb_depthwise_conv2d_s8_dsp(const mb_depthwise_conv2d_s8_params *params,
                                const int8_t *input, const int8_t *filter, const int32_t *bias,
                                const int32_t *interior_bias, const int32_t *multipliers,
                                const int32_t *shifts, int8_t *output, void *scratch);

/* "mve" (Helium, Cortex-M55): channels innermost, 4 int32 lanes per vector from widening byte
 * loads, tail-predicated; VQRDMULH-based requantization. No scratch, weights as stored. */
void mb_depthwise_conv2d_s8_mve(const mb_depthwise_conv2d_s8_params *params,
                                const int8_t *input, const int8_t *filter, const int32_t *bias,
                                const int32_t *interior_bias, const int32_t *multipliers,
                                const int32_t *shifts, int8_t *output, void *scratch);

/* "mve_planar" (Helium): one channel at a time, its values gathered into a plane in scratch, the
 * lanes neighbouring output pixels along an axis of stride 1, VMLA.S32 by the tap's scalar;
 * outputs stored by scatter. Scratch: the plane (depthwise_conv2d.py _planar_scratch). */
void mb_depthwise_conv2d_s8_mve_planar(const mb_depthwise_conv2d_s8_params *params,
                                       const int8_t *input, const int8_t *filter,
                                       const int32_t *bias, const int32_t *interior_bias,
                                       const int32_t *multipliers, const int32_t *shifts,
                                       int8_t *output, void *scratch);

/* "mve_temporal" (Helium): a 1-D time convolution (input and output 1 pixel wide, an H x 1
 * filter of at most 16 taps, no dilation). 16 channels at a time are transposed into a plane of
 * channel rows in scratch; each output is one VMLADAV.S8 of the channel's taps (the filter
 * arranged [channel][16], zeros after the taps) with 16 bytes of its row; outputs stored by
 * scatter. Scratch: depthwise_conv2d.py _temporal_scratch. */
void mb_depthwise_conv2d_s8_mve_temporal(const mb_depthwise_conv2d_s8_params *params,
                                         const int8_t *input, const int8_t *filter,
                                         const int32_t *bias, const int32_t *interior_bias,
                                         const int32_t *multipliers, const int32_t *shifts,
                                         int8_t *output, void *scratch);

/* "dsp_dense" and "mve_dense" (depthwise_conv2d_dense.c): a depth multiplier above 1 on at most
 * 4 input channels, as the CONV_2D it equals (conv2d_dsp.c / conv2d_mve.c) on a filter the
 * compiler made dense and arranged; scratch as those kernels'. */
void mb_depthwise_conv2d_s8_dense_dsp(const mb_depthwise_conv2d_s8_params *params,
                                      const int8_t *input, const int8_t *filter,
                                      const int32_t *bias, const int32_t *interior_bias,
                                      const int32_t *multipliers, const int32_t *shifts,
                                      int8_t *output, void *scratch);
void mb_depthwise_conv2d_s8_dense_mve(const mb_depthwise_conv2d_s8_params *params,
                                      const int8_t *input, const int8_t *filter,
                                      const int32_t *bias, const int32_t *interior_bias,
                                      const int32_t *multipliers, const int32_t *shifts,
                                      int8_t *output, void *scratch);

#endif
