#include "microbuild/kernels/unary_f32.h"

#include <math.h>

static float apply(int32_t operation, float x)
{
    switch (operation) {
    case MB_F32_EXP:
        return expf(x);
    case MB_F32_LOG:
        return logf(x);
    case MB_F32_NEG:
        return -x;
    case MB_F32_ABS:
        return fabsf(x);
    default:
        return 1.0f / sqrtf(x);
    }
}

void mb_unary_f32(int32_t operation, const float *input, float *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = apply(operation, input[i]);
    }
}
