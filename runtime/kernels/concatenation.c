#include "microbuild/kernels/concatenation.h"

#include "microbuild/kernels/copy_bytes.h"

/* Copies forward (the planner may place the output below an input it overlaps):
 * mb_copy_bytes_forward reads each word before writing it. */
void mb_concatenation_s8(int32_t outer, int32_t num_inputs, const int8_t *const *inputs,
                         const int32_t *block_sizes, int8_t *output)
{
    int8_t *out = output;
    for (int32_t k = 0; k < outer; k++) {
        for (int32_t i = 0; i < num_inputs; i++) {
            mb_copy_bytes_forward(out, inputs[i] + k * block_sizes[i], block_sizes[i]);
            out += block_sizes[i];
        }
    }
}
