#include "microbuild/kernels/arith_s32.h"

static int32_t wrap32(uint32_t u)
{
    return u < 0x80000000u ? (int32_t)u : -(int32_t)(~u) - 1;
}

static int32_t apply(int32_t operation, int32_t x, int32_t y)
{
    switch (operation) {
    case MB_S32_ADD:
        return wrap32((uint32_t)x + (uint32_t)y);
    case MB_S32_SUB:
        return wrap32((uint32_t)x - (uint32_t)y);
    case MB_S32_MUL:
        return wrap32((uint32_t)x * (uint32_t)y);
    case MB_S32_DIV:
        if (y == 0) {
            return 0;
        }
        if (y == -1) {
            return wrap32(0u - (uint32_t)x);
        }
        return x / y;
    case MB_S32_MIN:
        return x < y ? x : y;
    default:
        return x > y ? x : y;
    }
}

/* One innermost run of broadcast.c's walk. */
static void arith_row(const void *params, const int32_t *a, int32_t a_step, const int32_t *b,
                      int32_t b_step, int32_t *out, int32_t n)
{
    const mb_arith_s32_params *p = (const mb_arith_s32_params *)params;
    for (int32_t i = 0; i < n; i++) {
        const int32_t v = apply(p->operation, a[i * a_step], b[i * b_step]);
        const int32_t low = v < p->activation_min ? p->activation_min : v;
        out[i] = low > p->activation_max ? p->activation_max : low;
    }
}

void mb_arith_s32(const mb_arith_s32_params *p, const mb_broadcast_shape *shape,
                  const int32_t *a, const int32_t *b, int32_t *output)
{
    mb_broadcast_binary_s32(shape, a, b, output, arith_row, p);
}
