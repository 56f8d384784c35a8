#include "microbuild/kernels/signal_fft_auto_scale.h"

#include "microbuild/kernels/signal_common.h"

void mb_signal_fft_auto_scale(const int16_t *input, int32_t size, int16_t *output,
                              int32_t *scale_bits)
{
    int16_t max = 0;
    for (int32_t i = 0; i < size; i++) {
        const int32_t value = input[i];
        if (value > max) {
            max = (int16_t)value;
        } else if (-value > max) {
            max = mb_sig_wrap16(-value); /* -(-32768) wraps to -32768, as in TFLM */
        }
    }
    /* TFLM passes the int16 maximum to MostSignificantBit32(uint32_t): a negative one becomes a
     * huge value and the shift 0. */
    int32_t bits = 16 - (int32_t)mb_sig_msb32((uint32_t)(int32_t)max) - 1;
    if (bits <= 0) {
        bits = 0;
    }
    for (int32_t i = 0; i < size; i++) {
        output[i] = mb_sig_wrap16((int32_t)input[i] * ((int32_t)1 << bits));
    }
    *scale_bits = bits;
}
