/* SignalOverlapAdd (TFLM signal library): 'rows' rows of 'frames' frames of 'size' samples are
 * added into each row's running buffer ('state', rows * size samples, zeros after a reset); each
 * frame then releases the buffer's first 'step' samples to the output and shifts it by 'step'.
 * int16 sums saturate. output must not overlap input. */
#ifndef MICROBUILD_KERNELS_SIGNAL_OVERLAP_ADD_H
#define MICROBUILD_KERNELS_SIGNAL_OVERLAP_ADD_H

#include <stdint.h>

void mb_signal_overlap_add_s16(const int16_t *input, int16_t *state, int32_t rows,
                               int32_t frames, int32_t size, int32_t step, int16_t *output);
void mb_signal_overlap_add_f32(const float *input, float *state, int32_t rows, int32_t frames,
                               int32_t size, int32_t step, float *output);

#endif
