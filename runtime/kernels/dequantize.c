#include "microbuild/kernels/dequantize.h"

void mb_dequantize_s8_f32(float scale, int32_t zero_point, const int8_t *input, float *output,
                          int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = scale * (float)((int32_t)input[i] - zero_point);
    }
}

void mb_dequantize_s16_f32(float scale, int32_t zero_point, const int16_t *input, float *output,
                           int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = scale * (float)((int32_t)input[i] - zero_point);
    }
}

void mb_dequantize_u8_f32(float scale, int32_t zero_point, const uint8_t *input, float *output,
                          int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = scale * (float)((int32_t)input[i] - zero_point);
    }
}
