#include "microbuild/kernels/leaky_relu.h"

#include "microbuild/quant.h"

static int32_t leaky_relu_one(const mb_leaky_relu_params *p, int32_t in)
{
    const int32_t x = in - p->input_zero_point;
    const int32_t scaled = x >= 0
        ? mb_mul_by_quantized_multiplier(x, p->multiplier_identity, p->shift_identity)
        : mb_mul_by_quantized_multiplier(x, p->multiplier_alpha, p->shift_alpha);
    return p->output_zero_point + scaled;
}

void mb_leaky_relu_s8(const mb_leaky_relu_params *params, const int8_t *input, int8_t *output,
                      int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = (int8_t)mb_clamp_i32(leaky_relu_one(params, input[i]), -128, 127);
    }
}

void mb_leaky_relu_s16(const mb_leaky_relu_params *params, const int16_t *input, int16_t *output,
                       int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = (int16_t)mb_clamp_i32(leaky_relu_one(params, input[i]), -32768, 32767);
    }
}
