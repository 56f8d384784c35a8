/* DEPTHWISE_CONV_2D variants "dsp_dense" and "mve_dense": a depth multiplier above 1 on an input
 * of at most 4 channels, run as the one-group CONV_2D it equals. Output channel o filters input
 * channel o / depth_multiplier alone; the compiler makes the filter dense (depthwise_conv2d.py,
 * _as_dense: [output_c][h][w][input_c], zeros at the other input channels) and arranges it for
 * conv2d_dsp.c / conv2d_mve.c, whose kernels then sum the same products (and zeros) in another
 * order: the same int32 sums, the same bytes. Both kernels start interior pixels from
 * interior_bias and put the input zero point in the padding of their columns, as the depthwise
 * reference skips padded taps; the multiplied work (input_c times the taps) still runs several
 * times faster on their 2- and 16-lane dot products than the reference's one tap at a time. */
#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/depthwise_conv2d.h"

#if defined(__ARM_FEATURE_DSP) || defined(__ARM_FEATURE_MVE)
static mb_conv2d_s8_params as_conv(const mb_depthwise_conv2d_s8_params *p)
{
    const mb_conv2d_s8_params c = {
        .batches = p->batches,
        .input_h = p->input_h, .input_w = p->input_w, .input_c = p->input_c,
        .filter_h = p->filter_h, .filter_w = p->filter_w, .filter_c = p->input_c,
        .output_h = p->output_h, .output_w = p->output_w,
        .output_c = p->input_c * p->depth_multiplier,
        .stride_h = p->stride_h, .stride_w = p->stride_w,
        .dilation_h = p->dilation_h, .dilation_w = p->dilation_w,
        .pad_top = p->pad_top, .pad_left = p->pad_left,
        .input_offset = p->input_offset, .output_offset = p->output_offset,
        .activation_min = p->activation_min, .activation_max = p->activation_max,
    };
    return c;
}
#endif

#if defined(__ARM_FEATURE_DSP)
void mb_depthwise_conv2d_s8_dense_dsp(const mb_depthwise_conv2d_s8_params *params,
                                      const int8_t *input, const int8_t *filter,
                                      const int32_t *bias, const int32_t *interior_bias,
                                      const int32_t *multipliers, const int32_t *shifts,
                                      int8_t *output, void *scratch)
{
    const mb_conv2d_s8_params conv = as_conv(params);
    mb_conv2d_s8_dsp(&conv, input, filter, bias, interior_bias, multipliers, shifts,
                     (const mb_residual_add_s8 *)0, output, scratch);
}
#endif

#if defined(__ARM_FEATURE_MVE)
void mb_depthwise_conv2d_s8_dense_mve(const mb_depthwise_conv2d_s8_params *params,
                                      const int8_t *input, const int8_t *filter,
                                      const int32_t *bias, const int32_t *interior_bias,
                                      const int32_t *multipliers, const int32_t *shifts,
                                      int8_t *output, void *scratch)
{
    const mb_conv2d_s8_params conv = as_conv(params);
    mb_conv2d_s8_mve(&conv, input, filter, bias, interior_bias, multipliers, shifts,
                     (const mb_residual_add_s8 *)0, output, scratch);
}
#endif

#if !defined(__ARM_FEATURE_DSP) && !defined(__ARM_FEATURE_MVE)
typedef int mb_depthwise_conv2d_dense_unused;
#endif
