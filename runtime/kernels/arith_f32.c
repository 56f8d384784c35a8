#include "microbuild/kernels/arith_f32.h"

#include <math.h>

static float apply(int32_t operation, float x, float y)
{
    switch (operation) {
    case MB_F32_ADD:
        return x + y;
    case MB_F32_SUB:
        return x - y;
    case MB_F32_MUL:
        return x * y;
    case MB_F32_DIV:
        return x / y;
    case MB_F32_MIN:
        return y < x ? y : x; /* std::min(x, y) */
    case MB_F32_MAX:
        return x < y ? y : x; /* std::max(x, y) */
    case MB_F32_PRELU:
        return x >= 0.0f ? x : x * y;
    case MB_F32_FLOOR_DIV:
        return (float)floor((double)x / (double)y);
    case MB_F32_FLOOR_MOD: {
        const float mod = fmodf(x, y);
        return mod != 0.0f && ((y < 0.0f) != (mod < 0.0f)) ? mod + y : mod;
    }
    default: {
        const float d = x - y;
        return d * d;
    }
    }
}

/* One innermost run of broadcast.c's walk. */
static void arith_row(const void *params, const float *a, int32_t a_step, const float *b,
                      int32_t b_step, float *out, int32_t n)
{
    const mb_arith_f32_params *p = (const mb_arith_f32_params *)params;
    /* ADD, SUB and MUL, the common ones, get a loop each, without apply's switch per element. */
#define MB_ARITH_F32_LOOP(x, y, expression)                                                    \
    for (int32_t i = 0; i < n; i++) {                                                          \
        const float x = a[i * a_step], y = b[i * b_step];                                      \
        const float v = (expression);                                                          \
        out[i] = p->clamped ? mb_f32_clamp(v, p->activation_min, p->activation_max) : v;       \
    }
    switch (p->operation) {
    case MB_F32_ADD:
        MB_ARITH_F32_LOOP(x, y, x + y);
        break;
    case MB_F32_SUB:
        MB_ARITH_F32_LOOP(x, y, x - y);
        break;
    case MB_F32_MUL:
        MB_ARITH_F32_LOOP(x, y, x * y);
        break;
    default:
        MB_ARITH_F32_LOOP(x, y, apply(p->operation, x, y));
        break;
    }
#undef MB_ARITH_F32_LOOP
}

void mb_arith_f32(const mb_arith_f32_params *p, const mb_broadcast_shape *shape, const float *a,
                  const float *b, float *output)
{
    mb_broadcast_binary_f32(shape, a, b, output, arith_row, p);
}

void mb_add_n_f32(const float *const *inputs, int32_t count, float *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        float sum = 0.0f; /* from 0, as TFLM: a lone -0 input gives +0 */
        for (int32_t k = 0; k < count; k++) {
            sum += inputs[k][i];
        }
        output[i] = sum;
    }
}
