/* float32 -> int8 QUANTIZE, bit-exact with TFLM's reference_ops::AffineQuantize:
 * q = clamp(round_half_away_from_zero(x / scale) + zero_point, -128, 127), with the division done
 * in float (not as a multiplication by 1/scale, which rounds differently). No libm is needed. */
#ifndef MICROBUILD_KERNELS_QUANTIZE_H
#define MICROBUILD_KERNELS_QUANTIZE_H

#include <stdint.h>

/* output may share input's buffer: output[i] overwrites bytes of input[i / 4] at most, which has
 * been read already. */
void mb_quantize_f32_s8(float scale, int32_t zero_point, const float *input, int8_t *output,
                        int32_t size);
/* float32 -> int16 (16x8 models); in place like the int8 form (output[i] is 2 of input[i]'s 4
 * bytes' worth, written after input[i] is read). */
void mb_quantize_f32_s16(float scale, int32_t zero_point, const float *input, int16_t *output,
                         int32_t size);

#endif
