/* SignalFilterBankSpectralSubtraction (TFLM signal library): a per-channel noise estimate
 * (low-pass filtered signal, kept between invocations in the model's state buffer) subtracted
 * from the uint32 filter bank channels, never below min_signal_remaining of the signal. Outputs the
 * cleaned channels and a copy of the new noise estimate. */
#ifndef MICROBUILD_KERNELS_SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION_H
#define MICROBUILD_KERNELS_SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION_H

#include <stdint.h>

typedef struct {
    int32_t num_channels;
    uint32_t smoothing;
    uint32_t one_minus_smoothing;
    uint32_t alternate_smoothing; /* for odd channels */
    uint32_t alternate_one_minus_smoothing;
    uint32_t min_signal_remaining;
    int32_t smoothing_bits;
    int32_t spectral_subtraction_bits;
    int32_t clamping;
} mb_signal_spectral_subtraction_params;

void mb_signal_filter_bank_spectral_subtraction(
    const mb_signal_spectral_subtraction_params *params, const uint32_t *input,
    uint32_t *noise_state, uint32_t *output, uint32_t *noise_estimate);

#endif
