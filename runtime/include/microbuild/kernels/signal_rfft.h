/* SignalRfft (TFLM signal library), int16: a real FFT of fft_length points (each frame of
 * input_length samples zero-padded to it) giving fft_length / 2 + 1 complex int16 bins, bit-exact
 * with TFLM, which runs kiss_fft's 16-bit fixed-point real FFT: a complex FFT of half the length
 * over the samples taken in pairs (mixed radix 4 and 2, every stage dividing by its radix with
 * kiss_fft's rounding), then the split into the real spectrum. The twiddle factors and the
 * factorisation are computed at compile time exactly as kiss_fft_alloc rounds them. */
#ifndef MICROBUILD_KERNELS_SIGNAL_RFFT_H
#define MICROBUILD_KERNELS_SIGNAL_RFFT_H

#include <stdint.h>

#define MB_RFFT_MAX_STAGES 16

typedef struct {
    int32_t fft_length;   /* real points, a power of two >= 4 */
    int32_t input_length; /* samples per frame (<= fft_length) */
    int32_t frames;
    int32_t num_stages;
    int32_t factors[2 * MB_RFFT_MAX_STAGES]; /* (radix, remaining length) per stage */
    const int16_t *twiddles;       /* fft_length / 2 complex values (re, im) */
    const int16_t *super_twiddles; /* fft_length / 4 complex values */
} mb_signal_rfft_params;

/* scratch: fft_length / 2 complex int16 (fft_length int16), the half-length FFT's result. */
void mb_signal_rfft(const mb_signal_rfft_params *params, const int16_t *input, int16_t *output,
                    void *scratch);

#endif
