#include "microbuild/kernels/clamp.h"

void mb_clamp_s8(int8_t lo, int8_t hi, const int8_t *input, int8_t *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        const int8_t x = input[i];
        output[i] = x > hi ? hi : (x < lo ? lo : x);
    }
}
