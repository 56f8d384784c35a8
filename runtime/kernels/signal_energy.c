#include "microbuild/kernels/signal_energy.h"

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && !defined(__ARM_BIG_ENDIAN)
#include <arm_acle.h>
#include <string.h>

/* re * re + im * im of the (re, im) word in one SMUAD: the sum is 2^31 at most, whose low 32
 * bits (SMUAD's result, with the Q flag set) are those of the exact uint32 sum. */
static inline uint32_t bin_energy(const int16_t *bin)
{
    int32_t pair;
    memcpy(&pair, bin, sizeof(pair));
    return (uint32_t)__smuad(pair, pair);
}

#else

static inline uint32_t bin_energy(const int16_t *bin)
{
    const int32_t re = bin[0];
    const int32_t im = bin[1];
    /* Each square is at most 2^30; their sum 2^31 at most, exact in uint32. */
    return (uint32_t)(re * re) + (uint32_t)(im * im);
}

#endif

void mb_signal_energy(const int16_t *input, int32_t start_index, int32_t end_index,
                      int32_t size, uint32_t *output)
{
    /* Bins outside [start_index, end_index) are 0; the range is split once, not tested per bin. */
    const int32_t start = start_index < 0 ? 0 : (start_index > size ? size : start_index);
    const int32_t end = end_index > size ? size : (end_index < start ? start : end_index);
    for (int32_t i = 0; i < start; i++) {
        output[i] = 0;
    }
    int32_t i = start;
    for (; i + 2 <= end; i += 2) { /* two bins per pass: the loop's overhead is half the work */
        output[i] = bin_energy(&input[2 * i]);
        output[i + 1] = bin_energy(&input[2 * i + 2]);
    }
    if (i < end) {
        output[i] = bin_energy(&input[2 * i]);
    }
    for (int32_t i = end; i < size; i++) {
        output[i] = 0;
    }
}
