/* SignalFilterBankSquareRoot (TFLM signal library): the rounded integer square root of every
 * uint64 channel, shifted right by the run-time scale_bits (SignalFftAutoScale's shift). TFLM's
 * Sqrt64 takes a 32-bit path when the upper word is clear; the kernel follows both paths. */
#ifndef MICROBUILD_KERNELS_SIGNAL_FILTER_BANK_SQUARE_ROOT_H
#define MICROBUILD_KERNELS_SIGNAL_FILTER_BANK_SQUARE_ROOT_H

#include <stdint.h>

void mb_signal_filter_bank_square_root(const uint64_t *input, const int32_t *scale_bits,
                                       int32_t num_channels, uint32_t *output);

#endif
