#include "microbuild/kernels/add.h"

#include "microbuild/quant.h"

static void add_row(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                    int32_t b_step, int8_t *out, int32_t n)
{
    const mb_add_s8_params *p = (const mb_add_s8_params *)params;
    for (int32_t i = 0; i < n; i++) {
        const int32_t x1 = (p->input1_offset + a[i * a_step]) * (1 << p->left_shift);
        const int32_t x2 = (p->input2_offset + b[i * b_step]) * (1 << p->left_shift);
        const int32_t scaled1 = mb_mul_by_quantized_multiplier(x1, p->input1_multiplier,
                                                               p->input1_shift);
        const int32_t scaled2 = mb_mul_by_quantized_multiplier(x2, p->input2_multiplier,
                                                               p->input2_shift);
        const int32_t sum = scaled1 + scaled2;
        const int32_t result = mb_mul_by_quantized_multiplier(sum, p->output_multiplier,
                                                              p->output_shift) + p->output_offset;
        out[i] = (int8_t)mb_clamp_i32(result, p->activation_min, p->activation_max);
    }
}

void mb_add_s8(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
               const int8_t *input1, const int8_t *input2, int8_t *output)
{
    mb_broadcast_binary_s8(shape, input1, input2, output, add_row, params);
}
