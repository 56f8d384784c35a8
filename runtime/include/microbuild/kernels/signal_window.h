/* SignalWindow (TFLM signal library), int16: every frame of `window_size` samples is multiplied
 * element-wise by the window weights, shifted right by `shift` and saturated to int16. */
#ifndef MICROBUILD_KERNELS_SIGNAL_WINDOW_H
#define MICROBUILD_KERNELS_SIGNAL_WINDOW_H

#include <stdint.h>

void mb_signal_window(const int16_t *input, const int16_t *weights, int32_t size,
                      int32_t window_size, int32_t shift, int16_t *output);

#endif
