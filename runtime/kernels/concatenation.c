#include "microbuild/kernels/concatenation.h"

void mb_concatenation_s8(int32_t outer, int32_t num_inputs, const int8_t *const *inputs,
                         const int32_t *block_sizes, int8_t *output)
{
    int8_t *out = output;
    for (int32_t k = 0; k < outer; k++) {
        for (int32_t i = 0; i < num_inputs; i++) {
            const int8_t *in = inputs[i] + k * block_sizes[i];
            for (int32_t j = 0; j < block_sizes[i]; j++) {
                *out++ = in[j];
            }
        }
    }
}
