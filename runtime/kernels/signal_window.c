#include "microbuild/kernels/signal_window.h"

#include "microbuild/kernels/signal_common.h"

void mb_signal_window(const int16_t *input, const int16_t *weights, int32_t size,
                      int32_t window_size, int32_t shift, int16_t *output)
{
    for (int32_t start = 0; start < size; start += window_size) {
        for (int32_t i = 0; i < window_size; i++) {
            const int32_t product = (int32_t)input[start + i] * (int32_t)weights[i];
            output[start + i] = mb_sig_sat16(mb_sig_asr32(product, shift));
        }
    }
}
