#include "microbuild/kernels/cast_f32.h"

void mb_cast_int_to_f32(const void *input, int32_t input_type, float *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        switch (input_type) {
        case -1:
            output[i] = (float)((const int8_t *)input)[i];
            break;
        case 1:
            output[i] = (float)((const uint8_t *)input)[i];
            break;
        case -2:
            output[i] = (float)((const int16_t *)input)[i];
            break;
        case 2:
            output[i] = (float)((const uint16_t *)input)[i];
            break;
        case -4:
            output[i] = (float)((const int32_t *)input)[i];
            break;
        default:
            output[i] = (float)((const uint32_t *)input)[i];
            break;
        }
    }
}

void mb_cast_f32_to_int(const float *input, void *output, int32_t output_type, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        switch (output_type) {
        case -1:
            ((int8_t *)output)[i] = (int8_t)input[i];
            break;
        case 1:
            ((uint8_t *)output)[i] = (uint8_t)input[i];
            break;
        case -2:
            ((int16_t *)output)[i] = (int16_t)input[i];
            break;
        case 2:
            ((uint16_t *)output)[i] = (uint16_t)input[i];
            break;
        case -4:
            ((int32_t *)output)[i] = (int32_t)input[i];
            break;
        default:
            ((uint32_t *)output)[i] = (uint32_t)input[i];
            break;
        }
    }
}
