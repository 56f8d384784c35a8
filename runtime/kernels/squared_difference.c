#include "microbuild/kernels/squared_difference.h"

#include "microbuild/quant.h"

static int32_t squared_difference_one(const mb_squared_difference_params *p, int32_t a, int32_t b)
{
    const int32_t scaled1 = MB_RESCALE_INPUT1(p, a);
    const int32_t scaled2 = MB_RESCALE_INPUT2(p, b);
    /* At most 2^15 in magnitude (each scaled value is at most half its shifted input), so
     * the square fits in int32. */
    const int32_t diff = scaled1 - scaled2;
    const int32_t result = mb_mul_by_quantized_multiplier(diff * diff, p->output_multiplier,
                                                          p->output_shift) + p->output_offset;
    return mb_clamp_i32(result, p->activation_min, p->activation_max);
}

static void squared_difference_row_s8(const void *params, const int8_t *a, int32_t a_step,
                                      const int8_t *b, int32_t b_step, int8_t *out, int32_t n)
{
    const mb_squared_difference_params *p = (const mb_squared_difference_params *)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int8_t)squared_difference_one(p, a[i * a_step], b[i * b_step]);
    }
}

static void squared_difference_row_s16(const void *params, const int16_t *a, int32_t a_step,
                                       const int16_t *b, int32_t b_step, int16_t *out, int32_t n)
{
    const mb_squared_difference_params *p = (const mb_squared_difference_params *)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int16_t)squared_difference_one(p, a[i * a_step], b[i * b_step]);
    }
}

void mb_squared_difference_s8(const mb_squared_difference_params *params,
                              const mb_broadcast_shape *shape, const int8_t *input1,
                              const int8_t *input2, int8_t *output)
{
    mb_broadcast_binary_s8(shape, input1, input2, output, squared_difference_row_s8, params);
}

void mb_squared_difference_s16(const mb_squared_difference_params *params,
                               const mb_broadcast_shape *shape, const int16_t *input1,
                               const int16_t *input2, int16_t *output)
{
    mb_broadcast_binary_s16(shape, input1, input2, output, squared_difference_row_s16, params);
}
