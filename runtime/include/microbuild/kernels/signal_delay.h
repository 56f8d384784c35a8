/* SignalDelay (TFLM signal library): each of 'rows' rows of 'frame' int16 samples comes out
 * 'delay' samples later. 'state' holds every row's last 'delay' samples (rows * delay values,
 * zeros after a reset); output must not overlap input. */
#ifndef MICROBUILD_KERNELS_SIGNAL_DELAY_H
#define MICROBUILD_KERNELS_SIGNAL_DELAY_H

#include <stdint.h>

void mb_signal_delay(const int16_t *input, int16_t *state, int32_t rows, int32_t frame,
                     int32_t delay, int16_t *output);

#endif
