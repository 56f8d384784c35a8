/* Int8 -> int8 requantization with a clamp: out = clamp(zp_out + (in - zp_in) * M, min, max).
 *
 * This is TFLM's int8 RELU (ReluQuantized: the clamp's lower bound is the output's zero) and its
 * int8 -> int8 QUANTIZE (reference_ops::Requantize: the clamp is the full int8 range). */
#ifndef MICROBUILD_KERNELS_REQUANTIZE_H
#define MICROBUILD_KERNELS_REQUANTIZE_H

#include <stdint.h>

typedef struct {
    int32_t input_zero_point;
    int32_t multiplier;        /* Q31 input_scale / output_scale */
    int32_t shift;             /* > 0 shifts left */
    int32_t output_zero_point;
    int32_t activation_min;
    int32_t activation_max;
} mb_requantize_s8_params;

/* output may be input (in place). */
void mb_requantize_s8(const mb_requantize_s8_params *params, const int8_t *input, int8_t *output,
                      int32_t size);

/* The same between the other integer types TFLM's QUANTIZE converts (reference_ops::Requantize:
 * the clamp is the output type's range, activation_min/max are not read). Never in place: the
 * element sizes differ, or (int16 -> int16) the planner does not ask for it. */
void mb_requantize_s16_s8(const mb_requantize_s8_params *params, const int16_t *input,
                          int8_t *output, int32_t size);
void mb_requantize_s8_s16(const mb_requantize_s8_params *params, const int8_t *input,
                          int16_t *output, int32_t size);
void mb_requantize_s16_s16(const mb_requantize_s8_params *params, const int16_t *input,
                           int16_t *output, int32_t size);
void mb_requantize_s8_s32(const mb_requantize_s8_params *params, const int8_t *input,
                          int32_t *output, int32_t size);
void mb_requantize_s16_s32(const mb_requantize_s8_params *params, const int16_t *input,
                           int32_t *output, int32_t size);
/* uint8 <-> int8: a camera's uint8 frame into an int8 model, an int8 result out as uint8 (the
 * converter's inference_input_type / inference_output_type = tf.uint8). In place is safe (one
 * byte read, then one written at the same place). */
void mb_requantize_u8_s8(const mb_requantize_s8_params *params, const uint8_t *input,
                         int8_t *output, int32_t size);
void mb_requantize_s8_u8(const mb_requantize_s8_params *params, const int8_t *input,
                         uint8_t *output, int32_t size);
/* int32 -> int8 / int16, with TFLM's int32 wrap-around on full-range inputs. */
void mb_requantize_s32_s8(const mb_requantize_s8_params *params, const int32_t *input,
                          int8_t *output, int32_t size);
void mb_requantize_s32_s16(const mb_requantize_s8_params *params, const int32_t *input,
                           int16_t *output, int32_t size);

#endif
