#include "microbuild/kernels/abs.h"

#include "microbuild/quant.h"

void mb_abs_s16(const mb_abs_s16_params *params, const int16_t *input, int16_t *output,
                int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        int32_t value = input[i] < 0 ? -(int32_t)input[i] : (int32_t)input[i];
        if (params->rescale) {
            value = mb_mul_by_quantized_multiplier(value, params->multiplier, (int)params->shift);
        }
        output[i] = (int16_t)mb_clamp_i32(value, INT16_MIN, INT16_MAX);
    }
}
