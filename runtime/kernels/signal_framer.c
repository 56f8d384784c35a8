#include "microbuild/kernels/signal_framer.h"

#include "microbuild/kernels/signal_common.h"

void mb_signal_framer(const int16_t *input, int16_t *history, int16_t *count, int32_t rows,
                      int32_t frames, int32_t size, int32_t step, int32_t held,
                      int32_t prefilled, int16_t *output, uint8_t *valid)
{
    /* Every row sees the same sequence of writes and reads, so all hold the same number. */
    const int32_t start = prefilled + *count;
    int32_t n = start;
    *valid = 1;
    for (int32_t r = 0; r < rows; r++) {
        int16_t *h = history + r * held;
        n = start;
        for (int32_t f = 0; f < frames; f++) {
            const int32_t frame = r * frames + f;
            const int16_t *in = input + frame * step;
            if (n + step < size) {
                /* Not a frame yet: hold the new samples too. */
                for (int32_t k = 0; k < step; k++) {
                    h[n + k] = in[k];
                }
                n += step;
                *valid = 0;
                continue;
            }
            /* The frame is the held samples then the new ones; then drop the oldest 'step'.
             * Ascending: h[k] reads position k + step, not yet overwritten. */
            int16_t *out = output + frame * size;
            for (int32_t j = 0; j < size; j++) {
                out[j] = mb_sig_held_then_new(h, n, in, j);
            }
            for (int32_t k = 0; k < n; k++) {
                h[k] = mb_sig_held_then_new(h, n, in, k + step);
            }
        }
    }
    *count = (int16_t)(n - prefilled); /* <= held, which the compiler keeps below 2^15 */
}
