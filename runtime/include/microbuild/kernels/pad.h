/* Int8 PAD / PADV2 for tensors of up to five dimensions, bit-exact with TFLM's reference Pad.
 *
 * Input values are copied unchanged (input and output share scale and zero point) and the border
 * is filled with pad_value: the output zero point for PAD (real 0.0), the quantized constant for
 * PADV2. Shapes are left-extended to five dimensions at compile time. */
#ifndef MICROBUILD_KERNELS_PAD_H
#define MICROBUILD_KERNELS_PAD_H

#include <stdint.h>

#define MB_PAD_MAX_DIMS 5

typedef struct {
    int32_t input_dims[MB_PAD_MAX_DIMS];
    int32_t pad_before[MB_PAD_MAX_DIMS];
    int32_t pad_after[MB_PAD_MAX_DIMS];
    int32_t pad_value;  /* an int8 value, or an int16 one for mb_pad_s16 */
} mb_pad_s8_params;

void mb_pad_s8(const mb_pad_s8_params *params, const int8_t *input, int8_t *output);
/* The walk itself, on elements of `size` bytes (1, 2 or 4) and the pad value at `value`: what
 * mb_pad_s8, mb_pad_s16 and mb_pad_f32 call. */
void mb_pad_elements(const mb_pad_s8_params *params, int32_t size, const void *value,
                     const void *input, void *output);
/* The same on int16 values (16x8 models). */
void mb_pad_s16(const mb_pad_s8_params *params, const int16_t *input, int16_t *output);

#endif
