/* SignalStacker (TFLM signal library): one frame of 'channels' int16 values in per call; once
 * 'frames' frames are held they go out (oldest first, *valid = 1) and the oldest 'step' frames
 * are dropped; otherwise *valid = 0 and output is left as it was. The first frame after a reset
 * is held 'left' extra times. 'history' holds frames * channels values; count[0] is how many it
 * holds and count[1] is 1 once the first frame came, so a zeroed state is a reset one. */
#ifndef MICROBUILD_KERNELS_SIGNAL_STACKER_H
#define MICROBUILD_KERNELS_SIGNAL_STACKER_H

#include <stdint.h>

void mb_signal_stacker(const int16_t *input, int16_t *history, int16_t *count,
                       int32_t channels, int32_t frames, int32_t left, int32_t step,
                       int16_t *output, uint8_t *valid);

#endif
