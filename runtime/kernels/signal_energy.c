#include "microbuild/kernels/signal_energy.h"

void mb_signal_energy(const int16_t *input, int32_t start_index, int32_t end_index,
                      int32_t size, uint32_t *output)
{
    for (int32_t i = 0; i < size; i++) {
        if (i < start_index || i >= end_index) {
            output[i] = 0;
            continue;
        }
        const int32_t re = input[2 * i];
        const int32_t im = input[2 * i + 1];
        /* Each square is at most 2^30; their sum 2^31 at most, exact in uint32. */
        output[i] = (uint32_t)(re * re) + (uint32_t)(im * im);
    }
}
