#include "microbuild/kernels/cast.h"

#include <string.h>

static uint32_t load(const void *p, int32_t type, int32_t i)
{
    switch (type) {
    case -1:
        return (uint32_t)(int32_t)((const int8_t *)p)[i];
    case 1:
        return ((const uint8_t *)p)[i];
    case -2:
        return (uint32_t)(int32_t)((const int16_t *)p)[i];
    case 2:
        return ((const uint16_t *)p)[i];
    case -4:
        return (uint32_t)((const int32_t *)p)[i];
    default:
        return ((const uint32_t *)p)[i];
    }
}

/* Stores the low bits of v (the value modulo 2^32) in the output type. */
static void store(void *p, int32_t type, int32_t i, uint32_t v)
{
    switch (type) {
    case -1: {
        const uint32_t u = v & 0xFFu;
        ((int8_t *)p)[i] = (int8_t)(u < 0x80u ? (int32_t)u : (int32_t)u - 256);
        break;
    }
    case 1:
        ((uint8_t *)p)[i] = (uint8_t)(v & 0xFFu);
        break;
    case -2: {
        const uint32_t u = v & 0xFFFFu;
        ((int16_t *)p)[i] = (int16_t)(u < 0x8000u ? (int32_t)u : (int32_t)u - (int32_t)65536);
        break;
    }
    case 2:
        ((uint16_t *)p)[i] = (uint16_t)(v & 0xFFFFu);
        break;
    case -4:
        ((int32_t *)p)[i] = v < 0x80000000u ? (int32_t)v : -(int32_t)(~v) - 1;
        break;
    default:
        ((uint32_t *)p)[i] = v;
        break;
    }
}

void mb_cast_int(const void *input, int32_t input_type, void *output, int32_t output_type,
                 int32_t size)
{
    /* Between two types of one width (int32 <-> uint32, int8 <-> uint8, ...) the value modulo
     * 2^bits is the same bits: in place there is nothing to do (the audio front ends' uint32 ->
     * int32 -> uint32 casts around a CONCATENATION), elsewhere a copy. */
    if (input_type == output_type || input_type == -output_type) {
        if (input != output) {
            memmove(output, input, (size_t)size * (size_t)(input_type < 0 ? -input_type
                                                                          : input_type));
        }
        return;
    }
    for (int32_t i = 0; i < size; i++) {
        store(output, output_type, i, load(input, input_type, i));
    }
}
