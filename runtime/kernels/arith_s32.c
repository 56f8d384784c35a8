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

void mb_arith_s32(const mb_arith_s32_params *p, const mb_broadcast_shape *shape,
                  const int32_t *a, const int32_t *b, int32_t *output)
{
    const int32_t last = shape->num_dims - 1;
    const int32_t n = shape->dims[last];
    const int32_t a_step = shape->a_strides[last];
    const int32_t b_step = shape->b_strides[last];
    int32_t index[MB_BROADCAST_MAX_DIMS] = {0};
    int32_t a_offset = 0;
    int32_t b_offset = 0;
    for (;;) {
        for (int32_t i = 0; i < n; i++) {
            int32_t v = apply(p->operation, a[a_offset + i * a_step], b[b_offset + i * b_step]);
            v = v < p->activation_min ? p->activation_min : v;
            output[i] = v > p->activation_max ? p->activation_max : v;
        }
        output += n;
        int32_t d = last - 1;
        while (d >= 0) {
            index[d]++;
            a_offset += shape->a_strides[d];
            b_offset += shape->b_strides[d];
            if (index[d] < shape->dims[d]) {
                break;
            }
            a_offset -= shape->a_strides[d] * shape->dims[d];
            b_offset -= shape->b_strides[d] * shape->dims[d];
            index[d] = 0;
            d--;
        }
        if (d < 0) {
            return;
        }
    }
}
