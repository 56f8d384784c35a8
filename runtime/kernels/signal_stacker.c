#include "microbuild/kernels/signal_stacker.h"

void mb_signal_stacker(const int16_t *input, int16_t *history, int16_t *count,
                       int32_t channels, int32_t frames, int32_t left, int32_t step,
                       int16_t *output, uint8_t *valid)
{
    const int32_t capacity = frames * channels;
    int32_t n = count[0];
    const int32_t copies = count[1] ? 1 : 1 + left;
    for (int32_t c = 0; c < copies; c++) {
        for (int32_t k = 0; k < channels; k++) {
            history[n + k] = input[k];
        }
        n += channels;
    }
    count[1] = 1;
    if (n < capacity) {
        *valid = 0;
        count[0] = (int16_t)n; /* < frames * channels, below 2^15 */
        return;
    }
    for (int32_t k = 0; k < capacity; k++) {
        output[k] = history[k];
    }
    const int32_t dropped = step * channels;
    for (int32_t k = 0; k + dropped < capacity; k++) {
        history[k] = history[k + dropped];
    }
    count[0] = (int16_t)(capacity - dropped);
    *valid = 1;
}
