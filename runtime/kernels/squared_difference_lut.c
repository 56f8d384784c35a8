/* SQUARED_DIFFERENCE (int8), portable variant "lut": the reference's arithmetic with each input's
 * rescaling (offset, left shift 7, multiplier below 1) looked up in a table the compiler computed
 * with that same integer arithmetic (microbuild/compiler/ops/squared_difference.py), so the
 * difference, its square and the output rescaling see the same int32 values as the reference. */
#include "microbuild/kernels/squared_difference.h"

#include "microbuild/quant.h"

static void squared_difference_row_lut(const void *params, const int8_t *a, int32_t a_step,
                                       const int8_t *b, int32_t b_step, int8_t *out, int32_t n)
{
    const mb_squared_difference_lut *lut = (const mb_squared_difference_lut *)params;
    const mb_squared_difference_params *p = lut->params;
    const int16_t *t1 = lut->scaled1;
    const int16_t *t2 = lut->scaled2;
    for (int32_t i = 0; i < n; i++) {
        const int32_t diff = (int32_t)t1[(uint8_t)a[i * a_step]] - t2[(uint8_t)b[i * b_step]];
        const int32_t result = mb_mul_by_quantized_multiplier(diff * diff, p->output_multiplier,
                                                              p->output_shift) + p->output_offset;
        out[i] = (int8_t)mb_clamp_i32(result, p->activation_min, p->activation_max);
    }
}

void mb_squared_difference_s8_lut(const mb_squared_difference_lut *lut,
                                  const mb_broadcast_shape *shape, const int8_t *input1,
                                  const int8_t *input2, int8_t *output)
{
    mb_broadcast_binary_s8(shape, input1, input2, output, squared_difference_row_lut, lut);
}
