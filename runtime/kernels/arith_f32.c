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

/* The same walk as broadcast.c's, over floats: one innermost run per call of the loop body. */
void mb_arith_f32(const mb_arith_f32_params *p, const mb_broadcast_shape *shape, const float *a,
                  const float *b, float *output)
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
            const float v = apply(p->operation, a[a_offset + i * a_step], b[b_offset + i * b_step]);
            output[i] = p->clamped ? mb_f32_clamp(v, p->activation_min, p->activation_max) : v;
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
