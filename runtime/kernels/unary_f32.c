#include "microbuild/kernels/unary_f32.h"

#include <math.h>

#if defined(__AVR__)
/* avr-libc has no expm1f (its float functions are the double ones, double being 32 bits there).
 * TFLM does not run on AVR, so there is no reference bit pattern to keep: exp(x) - 1 is the
 * closest it has (less precise near 0). */
static float elu_expm1(float x)
{
    return expf(x) - 1.0f;
}
#else
#define elu_expm1 expm1f
#endif

/* TFLite's RoundToNearest: floor, then up when the rest is over a half, or exactly a half and
 * the floor odd. The int cast is only reached with a rest of a half, so |x| < 2^23 there. */
static float round_half_even(float x)
{
    const float floor_x = floorf(x);
    const float rest = x - floor_x;
    if (rest < 0.5f || (rest == 0.5f && (int32_t)floor_x % 2 == 0)) {
        return floor_x;
    }
    return floor_x + 1.0f;
}

/* TFLM's HardSwish: in * std::min(6, std::max(0, in + 3)) / 6, std::min(a, b) being
 * b < a ? b : a and std::max(a, b) being a < b ? b : a (which picks 0 for a NaN). */
static float hard_swish(float x)
{
    const float shifted = x + 3.0f;
    const float low = 0.0f < shifted ? shifted : 0.0f;
    const float high = low < 6.0f ? low : 6.0f;
    return x * high / 6.0f;
}

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
    case MB_F32_RSQRT:
        return 1.0f / sqrtf(x);
    case MB_F32_SQRT:
        return sqrtf(x);
    case MB_F32_SQUARE:
        return x * x;
    case MB_F32_SIN:
        return sinf(x);
    case MB_F32_COS:
        return cosf(x);
    case MB_F32_FLOOR:
        return floorf(x);
    case MB_F32_CEIL:
        return ceilf(x);
    case MB_F32_ROUND:
        return round_half_even(x);
    case MB_F32_ELU:
        return x < 0.0f ? elu_expm1(x) : x;
    default:
        return hard_swish(x);
    }
}

void mb_unary_f32(int32_t operation, const float *input, float *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = apply(operation, input[i]);
    }
}
