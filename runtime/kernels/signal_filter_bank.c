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
            const uint32_t energy = input[freq + j];
            const int32_t w = p->weights[first + j];
            const int32_t uw = p->unweights[first + j];
            /* TFLM multiplies the int16 weight converted to uint64 (modulo 2^64): the int64
             * product w x energy. Read as an int32, an energy at or above 2^31 is 2^32 less,
             * so the 32 x 32 -> 64-bit product (one SMLAL on Arm) misses w x 2^32 then: added
             * back to the high word. */
            const uint32_t high_bit = (uint32_t)((int32_t)energy >> 31); /* all ones or 0 */
            weighted += (uint64_t)((int64_t)w * (int32_t)energy);
            weighted += (uint64_t)((uint32_t)w & high_bit) << 32;
            unweighted += (uint64_t)((int64_t)uw * (int32_t)energy);
            unweighted += (uint64_t)((uint32_t)uw & high_bit) << 32;
        }
        if (ch > 0) {
            output[ch - 1] = weighted; /* channel 0 is scratch */
        }
        weighted = unweighted;
        unweighted = 0;
    }
}
