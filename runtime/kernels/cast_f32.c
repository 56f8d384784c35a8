#include "microbuild/kernels/cast_f32.h"

/* The type is chosen once per call, outside the element loop: one conversion instruction per
 * element rather than a switch per element. */
#define MB_CAST_LOOP(dst, src, count) \
    for (int32_t i = 0; i < (count); i++) { \
        (dst)[i] = (src)[i]; \
    }

void mb_cast_int_to_f32(const void *input, int32_t input_type, float *output, int32_t size)
{
    switch (input_type) {
    case -1:
        MB_CAST_LOOP(output, (const int8_t *)input, size);
        break;
    case 1:
        MB_CAST_LOOP(output, (const uint8_t *)input, size);
        break;
    case -2:
        MB_CAST_LOOP(output, (const int16_t *)input, size);
        break;
    case 2:
        MB_CAST_LOOP(output, (const uint16_t *)input, size);
        break;
    case -4:
        MB_CAST_LOOP(output, (const int32_t *)input, size);
        break;
    default:
        MB_CAST_LOOP(output, (const uint32_t *)input, size);
        break;
    }
}

void mb_cast_f32_to_int(const float *input, void *output, int32_t output_type, int32_t size)
{
    /* A C cast per element, as TFLM's static_cast. */
    switch (output_type) {
    case -1:
        MB_CAST_LOOP((int8_t *)output, input, size);
        break;
    case 1:
        MB_CAST_LOOP((uint8_t *)output, input, size);
        break;
    case -2:
        MB_CAST_LOOP((int16_t *)output, input, size);
        break;
    case 2:
        MB_CAST_LOOP((uint16_t *)output, input, size);
        break;
    case -4:
        MB_CAST_LOOP((int32_t *)output, input, size);
        break;
    default:
        MB_CAST_LOOP((uint32_t *)output, input, size);
        break;
    }
}
