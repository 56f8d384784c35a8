#include "microbuild/kernels/signal_window.h"

#include <string.h>

#include "microbuild/kernels/signal_common.h"

/* One sample: the product shifted down (flooring) and clamped to int16, as TFLM's window. */
static inline int16_t windowed(int32_t sample, int32_t weight, int32_t shift)
{
    return mb_sig_sat16(mb_sig_asr32(sample * weight, shift));
}

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && !defined(__ARM_BIG_ENDIAN)
#include <arm_acle.h>

/* Two samples per word and two weights per word: SMLABB / SMLATT (0 added) are the halves'
 * products, each shifted and clamped (SSAT) as above, the two results packed back into a word. */
static void window_run(const int16_t *input, const int16_t *weights, int32_t count,
                       int32_t shift, int16_t *output)
{
    int32_t i = 0;
    for (; i + 2 <= count; i += 2) {
        int32_t samples, pair_weights;
        memcpy(&samples, &input[i], sizeof(samples));
        memcpy(&pair_weights, &weights[i], sizeof(pair_weights));
        const int32_t low = mb_sig_sat16(mb_sig_asr32(__smlabb(samples, pair_weights, 0), shift));
        const int32_t high = mb_sig_sat16(mb_sig_asr32(__smlatt(samples, pair_weights, 0), shift));
        const uint32_t packed = ((uint32_t)low & 0xFFFFu) | ((uint32_t)high << 16);
        memcpy(&output[i], &packed, sizeof(packed));
    }
    if (i < count) {
        output[i] = windowed(input[i], weights[i], shift);
    }
}

#else

static void window_run(const int16_t *input, const int16_t *weights, int32_t count,
                       int32_t shift, int16_t *output)
{
    for (int32_t i = 0; i < count; i++) {
        output[i] = windowed(input[i], weights[i], shift);
    }
}

#endif

void mb_signal_window(const int16_t *input, const int16_t *weights, int32_t size,
                      int32_t window_size, int32_t shift, int16_t *output)
{
    for (int32_t start = 0; start < size; start += window_size) {
        window_run(input + start, weights, window_size, shift, output + start);
    }
}
