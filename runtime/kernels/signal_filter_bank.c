#include "microbuild/kernels/signal_filter_bank.h"

void mb_signal_filter_bank(const mb_signal_filter_bank_params *p, const uint32_t *input,
                           uint64_t *output)
{
    uint64_t weighted = 0;
    uint64_t unweighted = 0;
    for (int32_t ch = 0; ch <= p->num_channels; ch++) {
        const int32_t freq = p->channel_frequency_starts[ch];
        const int32_t first = p->channel_weight_starts[ch];
        /* TFLM multiplies the int16 weight converted to uint64 (modulo 2^64): the int64 product
         * w x energy. Read as an int32 (one SMLAL on Arm), an energy at or above 2^31 is 2^32
         * less, so w x 2^32 is missed then. Those (rare: a branch, not a mask per term) are
         * summed in 32 bits, all of them that reaches the 64-bit sum's high word, and added
         * once per channel. */
        uint32_t weighted_high = 0;
        uint32_t unweighted_high = 0;
        const uint32_t *energies = input + freq;
        const int16_t *w = p->weights + first;
        const int16_t *uw = p->unweights + first;
        for (int32_t j = 0; j < p->channel_widths[ch]; j++) {
            const uint32_t energy = energies[j];
            weighted += (uint64_t)((int64_t)w[j] * (int32_t)energy);
            unweighted += (uint64_t)((int64_t)uw[j] * (int32_t)energy);
            if ((int32_t)energy < 0) {
                weighted_high += (uint32_t)(int32_t)w[j];
                unweighted_high += (uint32_t)(int32_t)uw[j];
            }
        }
        weighted += (uint64_t)weighted_high << 32;
        unweighted += (uint64_t)unweighted_high << 32;
        if (ch > 0) {
            output[ch - 1] = weighted; /* channel 0 is scratch */
        }
        weighted = unweighted;
        unweighted = 0;
    }
}
