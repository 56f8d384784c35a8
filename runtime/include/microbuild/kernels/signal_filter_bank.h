/* SignalFilterBank (TFLM signal library): triangular mel filters over a uint32 energy spectrum,
 * accumulated in uint64 with TFLM's weight / unweight scheme (each bin feeds its channel with
 * `weight` and the next channel with `unweight`). The channel tables (num_channels + 1 entries,
 * entry 0 scratch) are the model's constants. */
#ifndef MICROBUILD_KERNELS_SIGNAL_FILTER_BANK_H
#define MICROBUILD_KERNELS_SIGNAL_FILTER_BANK_H

#include <stdint.h>

typedef struct {
    int32_t num_channels;
    const int16_t *weights;
    const int16_t *unweights;
    const int16_t *channel_frequency_starts;
    const int16_t *channel_weight_starts;
    const int16_t *channel_widths;
} mb_signal_filter_bank_params;

void mb_signal_filter_bank(const mb_signal_filter_bank_params *params, const uint32_t *input,
                           uint64_t *output);

#endif
