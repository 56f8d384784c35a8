#include "microbuild/kernels/l2norm.h"

#include "microbuild/kernels/inv_sqrt.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

void mb_l2norm_s8(const mb_l2norm_s8_params *params, const int8_t *input, int8_t *output)
{
    const int32_t depth = params->depth;
    for (int32_t row = 0; row < params->rows; row++) {
        const int8_t *x = input + row * depth;
        int8_t *y = output + row * depth;
        int32_t sum = 0;
        for (int32_t c = 0; c < depth; c++) {
            const int32_t v = (int32_t)x[c] - params->input_zero_point;
            sum += v * v;
        }
        int32_t multiplier;
        int shift;
        mb_inv_sqrt_multiplier(sum, &multiplier, &shift);
        for (int32_t c = 0; c < depth; c++) {
            const int32_t v = (int32_t)x[c] - params->input_zero_point;
            /* the reference's MultiplyByQuantizedMultiplier: its saturating case needs a
             * multiplier of INT32_MIN, and the inverse square root's is positive */
            const int32_t out = mb_requantize_fast32(v, multiplier, shift + 7);
            y[c] = (int8_t)mb_clamp_i32(out, INT8_MIN, INT8_MAX);
        }
    }
}
