#include "microbuild/kernels/signal_delay.h"

#include "microbuild/kernels/signal_common.h"

/* Per row, the samples in order are: the held ones (state, oldest first), then this frame.
 * The first 'frame' of them go out; the last 'delay' of them are held for the next call. */
void mb_signal_delay(const int16_t *input, int16_t *state, int32_t rows, int32_t frame,
                     int32_t delay, int16_t *output)
{
    for (int32_t r = 0; r < rows; r++) {
        const int16_t *in = input + r * frame;
        int16_t *held = state + r * delay;
        int16_t *out = output + r * frame;
        for (int32_t j = 0; j < frame; j++) {
            out[j] = mb_sig_held_then_new(held, delay, in, j);
        }
        /* Ascending: held[k] reads position frame + k > k, which has not been overwritten. */
        for (int32_t k = 0; k < delay; k++) {
            held[k] = mb_sig_held_then_new(held, delay, in, frame + k);
        }
    }
}
