/* SignalFramer (TFLM signal library): each of 'rows' rows brings frames * step new int16
 * samples; every 'step' of them a frame of 'size' samples ends (the held samples, oldest first,
 * then the new ones). 'history' holds up to 'held' samples per row; *count is how many each row
 * holds beyond 'prefilled' (the zeros TFLM's prefill starts with), so a zeroed state is a reset
 * one. *valid is 0 when some frame had fewer than 'size' samples (its output is left as it
 * was), else 1. output must not overlap input. */
#ifndef MICROBUILD_KERNELS_SIGNAL_FRAMER_H
#define MICROBUILD_KERNELS_SIGNAL_FRAMER_H

#include <stdint.h>

void mb_signal_framer(const int16_t *input, int16_t *history, int16_t *count, int32_t rows,
                      int32_t frames, int32_t size, int32_t step, int32_t held,
                      int32_t prefilled, int16_t *output, uint8_t *valid);

#endif
