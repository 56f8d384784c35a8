#include "microbuild/kernels/prelu.h"

#include "microbuild/quant.h"

static int32_t prelu_one(const mb_prelu_params *p, int32_t in, int32_t alpha)
{
    const int32_t x = p->input_offset + in;
    int32_t result;
    if (x >= 0) {
        result = mb_mul_by_quantized_multiplier(x, p->output_multiplier_1, p->output_shift_1);
    } else {
        result = mb_mul_by_quantized_multiplier(x * (p->alpha_offset + alpha),
                                                p->output_multiplier_2, p->output_shift_2);
    }
    return result + p->output_offset;
}

static void prelu_row_s8(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                         int32_t b_step, int8_t *out, int32_t n)
{
    const mb_prelu_params *p = (const mb_prelu_params *)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int8_t)mb_clamp_i32(prelu_one(p, a[i * a_step], b[i * b_step]), -128, 127);
    }
}

static void prelu_row_s16(const void *params, const int16_t *a, int32_t a_step, const int16_t *b,
                          int32_t b_step, int16_t *out, int32_t n)
{
    const mb_prelu_params *p = (const mb_prelu_params *)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int16_t)mb_clamp_i32(prelu_one(p, a[i * a_step], b[i * b_step]), -32768, 32767);
    }
}

void mb_prelu_s8(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                 const int8_t *input, const int8_t *alpha, int8_t *output)
{
    mb_broadcast_binary_s8(shape, input, alpha, output, prelu_row_s8, params);
}

void mb_prelu_s16(const mb_prelu_params *params, const mb_broadcast_shape *shape,
                  const int16_t *input, const int16_t *alpha, int16_t *output)
{
    mb_broadcast_binary_s16(shape, input, alpha, output, prelu_row_s16, params);
}
