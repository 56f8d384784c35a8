/* int8 / uint8 / int16 -> float32 DEQUANTIZE, bit-exact with TFLM's reference_ops::Dequantize.
 *
 * TFLM computes (float)((double)scale * (in - zero_point)). That double product is exact (a 24-bit
 * significand times an integer of at most 17 bits), so it equals the float product
 * scale * (float)(in - zero_point) rounded once: the device needs no double arithmetic, which a
 * Cortex-M4 would emulate. */
#ifndef MICROBUILD_KERNELS_DEQUANTIZE_H
#define MICROBUILD_KERNELS_DEQUANTIZE_H

#include <stdint.h>

/* output must not share input's buffer: each float overwrites the next three input bytes. */
void mb_dequantize_s8_f32(float scale, int32_t zero_point, const int8_t *input, float *output,
                          int32_t size);
void mb_dequantize_s16_f32(float scale, int32_t zero_point, const int16_t *input, float *output,
                           int32_t size);
void mb_dequantize_u8_f32(float scale, int32_t zero_point, const uint8_t *input, float *output,
                          int32_t size);

#endif
