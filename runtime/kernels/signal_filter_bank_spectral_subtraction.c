#include "microbuild/kernels/signal_filter_bank_spectral_subtraction.h"

void mb_signal_filter_bank_spectral_subtraction(
    const mb_signal_spectral_subtraction_params *p, const uint32_t *input, uint32_t *noise_state,
    uint32_t *output, uint32_t *noise_estimate)
{
    for (int32_t i = 0; i < p->num_channels; i++) {
        const int odd = (i & 1) != 0;
        const uint32_t smoothing = odd ? p->alternate_smoothing : p->smoothing;
        const uint32_t keep = odd ? p->alternate_one_minus_smoothing : p->one_minus_smoothing;
        const uint32_t signal = input[i] << p->smoothing_bits;
        noise_state[i] = (uint32_t)(((uint64_t)signal * smoothing +
                                     (uint64_t)noise_state[i] * keep) >>
                                    p->spectral_subtraction_bits);
        uint32_t estimate = noise_state[i];
        if (estimate > signal) {
            estimate = signal;
            if (p->clamping) {
                noise_state[i] = estimate;
            }
        }
        const uint32_t floor = (uint32_t)(((uint64_t)input[i] * p->min_signal_remaining) >>
                                          p->spectral_subtraction_bits);
        const uint32_t subtracted = (signal - estimate) >> p->smoothing_bits;
        output[i] = subtracted > floor ? subtracted : floor;
        noise_estimate[i] = noise_state[i];
    }
}
