#include "microbuild/kernels/rsqrt.h"

#include "microbuild/kernels/inv_sqrt.h"
#include "microbuild/quant.h"

void mb_rsqrt_s16(const mb_rsqrt_s16_params *params, const int16_t *input, int16_t *output,
                  int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        const int32_t value = input[i];
        if (value <= 0) {
            output[i] = INT16_MAX;
            continue;
        }
        int32_t inv_sqrt;
        int inv_shift;
        mb_inv_sqrt_multiplier(value, &inv_sqrt, &inv_shift);
        const int32_t data = mb_mul_by_quantized_multiplier(1, inv_sqrt, inv_shift + 20);
        const int32_t result = mb_mul_by_quantized_multiplier(data, params->multiplier,
                                                              (int)params->shift);
        output[i] = (int16_t)mb_clamp_i32(result, INT16_MIN, INT16_MAX);
    }
}
