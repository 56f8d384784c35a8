/* SignalFilterBankLog (TFLM signal library): output_scale * ln(x << input_correction_bits) per
 * channel in fixed point (TFLM's Log32: integer part from the top bit, fraction from a 128-segment
 * table interpolated linearly), saturated to int16; 0 for inputs of 0 or 1. The table is computed
 * at compile time and passed in. */
#ifndef MICROBUILD_KERNELS_SIGNAL_FILTER_BANK_LOG_H
#define MICROBUILD_KERNELS_SIGNAL_FILTER_BANK_LOG_H

#include <stdint.h>

void mb_signal_filter_bank_log(const uint32_t *input, int32_t num_channels, uint32_t output_scale,
                               int32_t correction_bits, const uint16_t *log_lut,
                               int16_t *output);

#endif
