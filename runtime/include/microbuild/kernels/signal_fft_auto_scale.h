/* SignalFftAutoScale (TFLM signal library): shift int16 samples left by as many bits as their
 * largest magnitude leaves free, and output that shift (int32). TFLM's MaxAbs16 keeps its running
 * maximum in an int16, so -32768 wraps; the kernel does the same. */
#ifndef MICROBUILD_KERNELS_SIGNAL_FFT_AUTO_SCALE_H
#define MICROBUILD_KERNELS_SIGNAL_FFT_AUTO_SCALE_H

#include <stdint.h>

void mb_signal_fft_auto_scale(const int16_t *input, int32_t size, int16_t *output,
                              int32_t *scale_bits);

#endif
