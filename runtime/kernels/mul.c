#include "microbuild/kernels/mul.h"

#include "microbuild/quant.h"

static int32_t mul_one(const mb_mul_s8_params *p, int32_t a, int32_t b)
{
    const int32_t x1 = p->input1_offset + a;
    const int32_t x2 = p->input2_offset + b;
    const int32_t result = mb_mul_by_quantized_multiplier(x1 * x2, p->output_multiplier,
                                                          p->output_shift) + p->output_offset;
    return mb_clamp_i32(result, p->activation_min, p->activation_max);
}

static void mul_row(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                    int32_t b_step, int8_t *out, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int8_t)mul_one((const mb_mul_s8_params *)params, a[i * a_step], b[i * b_step]);
    }
}

static void mul_row_s16(const void *params, const int16_t *a, int32_t a_step, const int16_t *b,
                        int32_t b_step, int16_t *out, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int16_t)mul_one((const mb_mul_s8_params *)params, a[i * a_step], b[i * b_step]);
    }
}

void mb_mul_s8(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
               const int8_t *input1, const int8_t *input2, int8_t *output)
{
    mb_broadcast_binary_s8(shape, input1, input2, output, mul_row, params);
}

void mb_mul_s16(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                const int16_t *input1, const int16_t *input2, int16_t *output)
{
    mb_broadcast_binary_s16(shape, input1, input2, output, mul_row_s16, params);
}
