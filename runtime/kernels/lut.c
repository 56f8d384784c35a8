#include "microbuild/kernels/lut.h"

void mb_lut_s8(const int8_t table[256], const int8_t *input, int8_t *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = table[(int32_t)input[i] + 128];
    }
}
