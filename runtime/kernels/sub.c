#include "microbuild/kernels/sub.h"

#include "microbuild/quant.h"

/* Rescale each input exactly as ADD does, then subtract: negating the second multiplier instead
 * would round ties differently. */
static int32_t sub_one(const mb_add_s8_params *p, int32_t a, int32_t b)
{
    const int32_t scaled1 = MB_RESCALE_INPUT1(p, a);
    const int32_t scaled2 = MB_RESCALE_INPUT2(p, b);
    const int32_t result = mb_mul_by_quantized_multiplier(scaled1 - scaled2, p->output_multiplier,
                                                          p->output_shift) + p->output_offset;
    return mb_clamp_i32(result, p->activation_min, p->activation_max);
}

static void sub_row_s8(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                       int32_t b_step, int8_t *out, int32_t n)
{
    const mb_add_s8_params *p = (const mb_add_s8_params *)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int8_t)sub_one(p, a[i * a_step], b[i * b_step]);
    }
}

static void sub_row_s16(const void *params, const int16_t *a, int32_t a_step, const int16_t *b,
                        int32_t b_step, int16_t *out, int32_t n)
{
    const mb_add_s8_params *p = (const mb_add_s8_params *)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int16_t)sub_one(p, a[i * a_step], b[i * b_step]);
    }
}

void mb_sub_s8(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
               const int8_t *input1, const int8_t *input2, int8_t *output)
{
    mb_broadcast_binary_s8(shape, input1, input2, output, sub_row_s8, params);
}

void mb_sub_s16(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                const int16_t *input1, const int16_t *input2, int16_t *output)
{
    mb_broadcast_binary_s16(shape, input1, input2, output, sub_row_s16, params);
}
