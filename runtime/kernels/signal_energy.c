#include "microbuild/kernels/signal_energy.h"

void mb_signal_energy(const int16_t *input, int32_t start_index, int32_t end_index,
                      int32_t size, uint32_t *output)
{
    /* Bins outside [start_index, end_index) are 0; the range is split once, not tested per bin. */
    const int32_t start = start_index < 0 ? 0 : (start_index > size ? size : start_index);
    const int32_t end = end_index > size ? size : (end_index < start ? start : end_index);
    for (int32_t i = 0; i < start; i++) {
        output[i] = 0;
    }
    for (int32_t i = start; i < end; i++) {
        const int32_t re = input[2 * i];
        const int32_t im = input[2 * i + 1];
        /* Each square is at most 2^30; their sum 2^31 at most, exact in uint32. */
        output[i] = (uint32_t)(re * re) + (uint32_t)(im * im);
    }
    for (int32_t i = end; i < size; i++) {
        output[i] = 0;
    }
}
