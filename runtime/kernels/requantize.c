#include "microbuild/kernels/requantize.h"

#include "microbuild/quant.h"

void mb_requantize_s8(const mb_requantize_s8_params *params, const int8_t *input, int8_t *output,
                      int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        const int32_t x = (int32_t)input[i] - params->input_zero_point;
        const int32_t result = mb_mul_by_quantized_multiplier(x, params->multiplier, params->shift) +
                               params->output_zero_point;
        output[i] = (int8_t)mb_clamp_i32(result, params->activation_min, params->activation_max);
    }
}
