#include "microbuild/kernels/concatenation.h"

#include <string.h>

/* Copies forward (the planner may place the output below an input it overlaps): whole 32-bit
 * words first (each read into a local before it is written, so no memcpy sees an overlap;
 * compilers make each an LDR/STR), then the remaining bytes. */
static void copy_forward(int8_t *out, const int8_t *in, int32_t bytes)
{
    int32_t j = 0;
    for (; j + 4 <= bytes; j += 4) {
        uint32_t word;
        memcpy(&word, in + j, 4);
        memcpy(out + j, &word, 4);
    }
    for (; j < bytes; j++) {
        out[j] = in[j];
    }
}

void mb_concatenation_s8(int32_t outer, int32_t num_inputs, const int8_t *const *inputs,
                         const int32_t *block_sizes, int8_t *output)
{
    int8_t *out = output;
    for (int32_t k = 0; k < outer; k++) {
        for (int32_t i = 0; i < num_inputs; i++) {
            copy_forward(out, inputs[i] + k * block_sizes[i], block_sizes[i]);
            out += block_sizes[i];
        }
    }
}
