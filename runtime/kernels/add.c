#include "microbuild/kernels/add.h"

static void add_row(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                    int32_t b_step, int8_t *out, int32_t n)
{
    const mb_add_s8_params *p = (const mb_add_s8_params *)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = mb_add_s8_one(p, a[i * a_step], b[i * b_step]);
    }
}

void mb_add_s8(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
               const int8_t *input1, const int8_t *input2, int8_t *output)
{
    mb_broadcast_binary_s8(shape, input1, input2, output, add_row, params);
}

static void add_row_s16(const void *params, const int16_t *a, int32_t a_step, const int16_t *b,
                        int32_t b_step, int16_t *out, int32_t n)
{
    const mb_add_s8_params *p = (const mb_add_s8_params *)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int16_t)mb_add_one(p, a[i * a_step], b[i * b_step]);
    }
}

void mb_add_s16(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                const int16_t *input1, const int16_t *input2, int16_t *output)
{
    mb_broadcast_binary_s16(shape, input1, input2, output, add_row_s16, params);
}
