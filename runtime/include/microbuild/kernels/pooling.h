/* Int8 AVERAGE_POOL_2D and MAX_POOL_2D on NHWC tensors, bit-exact with TFLM's
 * reference_integer_ops::AveragePool / MaxPool.
 *
 * Both work on the raw int8 values: TFLM does not rescale, the input and output share scale and
 * zero point. Windows are clipped to the input, so padding never contributes: the average divides
 * by the number of input elements actually inside the window, rounding half away from zero; the
 * maximum starts from -128. The fused activation is a clamp to [activation_min, activation_max]. */
#ifndef MICROBUILD_KERNELS_POOLING_H
#define MICROBUILD_KERNELS_POOLING_H

#include <stdint.h>

typedef struct {
    int32_t batches;
    int32_t input_h, input_w;
    int32_t channels;
    int32_t output_h, output_w;
    int32_t filter_h, filter_w;
    int32_t stride_h, stride_w;
    int32_t pad_top, pad_left;
    int32_t activation_min, activation_max;
} mb_pool2d_s8_params;

void mb_avgpool2d_s8(const mb_pool2d_s8_params *params, const int8_t *input, int8_t *output);
void mb_maxpool2d_s8(const mb_pool2d_s8_params *params, const int8_t *input, int8_t *output);

/* The same on int16 activations (16x8 quantization): TFLM's int16 pooling is the int8 algorithm
 * on 16-bit values. */
void mb_avgpool2d_s16(const mb_pool2d_s8_params *params, const int16_t *input, int16_t *output);
void mb_maxpool2d_s16(const mb_pool2d_s8_params *params, const int16_t *input, int16_t *output);

/* AVERAGE_POOL_2D variants (microbuild/compiler/ops/pooling.py): the same arguments plus the
 * scratch pointer (unused: NULL), the same bytes out. Each sums several channels per load in
 * 16-bit lanes, moved to int32 every 256 window positions (exact, see each kernel file).
 * swar: portable C, 4 channels per 32-bit word; needs channels % 4 == 0 and a 4-byte aligned
 *       input, else runs mb_avgpool2d_s8 (pooling_portable.c).
 * dsp:  Arm DSP, SXTAB16 (pooling_dsp.c).
 * mve:  Helium, VLDRB.S16 + VADD.I16 (pooling_mve.c). */
void mb_avgpool2d_s8_swar(const mb_pool2d_s8_params *params, const int8_t *input, int8_t *output,
                          void *scratch);
void mb_avgpool2d_s8_dsp(const mb_pool2d_s8_params *params, const int8_t *input, int8_t *output,
                         void *scratch);
void mb_avgpool2d_s8_mve(const mb_pool2d_s8_params *params, const int8_t *input, int8_t *output,
                         void *scratch);

/* MAX_POOL_2D variant "mve" (pooling_mve.c): 16 channels per VMAX.S8, the same arguments. */
void mb_maxpool2d_s8_mve(const mb_pool2d_s8_params *params, const int8_t *input, int8_t *output,
                         void *scratch);

#endif
