/* SignalPCAN (TFLM signal library): per-channel automatic gain control. The gain comes from a
 * piecewise-quadratic table (gain_lut, 4 entries per octave of the noise estimate) and the
 * gain-scaled signal goes through the "shrink" curve (x^2/4 below 2, x - 1 above; 12 fractional
 * bits in, 6 out). */
#ifndef MICROBUILD_KERNELS_SIGNAL_PCAN_H
#define MICROBUILD_KERNELS_SIGNAL_PCAN_H

#include <stdint.h>

void mb_signal_pcan(const uint32_t *input, const uint32_t *noise_estimate,
                    const int16_t *gain_lut, int32_t snr_shift, int32_t num_channels,
                    uint32_t *output);

#endif
