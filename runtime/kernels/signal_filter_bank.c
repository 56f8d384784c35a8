#include "microbuild/kernels/signal_filter_bank.h"

void mb_signal_filter_bank(const mb_signal_filter_bank_params *p, const uint32_t *input,
                           uint64_t *output)
{
    uint64_t weighted = 0;
    uint64_t unweighted = 0;
    for (int32_t ch = 0; ch <= p->num_channels; ch++) {
        const int32_t freq = p->channel_frequency_starts[ch];
        const int32_t first = p->channel_weight_starts[ch];
        for (int32_t j = 0; j < p->channel_widths[ch]; j++) {
            const uint64_t energy = input[freq + j];
            /* TFLM multiplies the int16 weight converted to uint64 (modulo 2^64). */
            weighted += (uint64_t)(int64_t)p->weights[first + j] * energy;
            unweighted += (uint64_t)(int64_t)p->unweights[first + j] * energy;
        }
        if (ch > 0) {
            output[ch - 1] = weighted; /* channel 0 is scratch */
        }
        weighted = unweighted;
        unweighted = 0;
    }
}
