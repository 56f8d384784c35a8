#include "microbuild/kernels/signal_pcan.h"

#include "microbuild/kernels/signal_common.h"

#define SNR_BITS 12
#define OUTPUT_BITS 6

/* TFLM's WideDynamicFunction, its int32 arithmetic done modulo 2^32 (uint32) so no overflow is
 * undefined here either. */
static int16_t gain(uint32_t x, const int16_t *lut)
{
    if (x <= 2) {
        return lut[x];
    }
    const int32_t interval = (int32_t)mb_sig_msb32(x);
    lut += 4 * interval - 6;
    const uint32_t shifted = interval < 11 ? x << (11 - interval) : x >> (interval - 11);
    const int32_t frac = (int32_t)(shifted & 0x3FFu);
    int32_t result = mb_sig_asr32((int32_t)lut[2] * frac, 5);
    result = mb_sig_wrap32((uint32_t)result + ((uint32_t)(int32_t)lut[1] << 5));
    result = mb_sig_wrap32((uint32_t)result * (uint32_t)frac);
    result = mb_sig_asr32(mb_sig_wrap32((uint32_t)result + ((uint32_t)1 << 14)), 15);
    result += lut[0];
    return mb_sig_wrap16(result);
}

static uint32_t shrink(uint32_t x)
{
    if (x < ((uint32_t)2 << SNR_BITS)) {
        return (x * x) >> (2 + 2 * SNR_BITS - OUTPUT_BITS);
    }
    return (x >> (SNR_BITS - OUTPUT_BITS)) - ((uint32_t)1 << OUTPUT_BITS);
}

void mb_signal_pcan(const uint32_t *input, const uint32_t *noise_estimate,
                    const int16_t *gain_lut, int32_t snr_shift, int32_t num_channels,
                    uint32_t *output)
{
    for (int32_t i = 0; i < num_channels; i++) {
        /* The int16 gain widened to uint32 as TFLM does (sign-extended). */
        const uint32_t g = (uint32_t)(int32_t)gain(noise_estimate[i], gain_lut);
        const uint32_t snr = (uint32_t)(((uint64_t)input[i] * g) >> snr_shift);
        output[i] = shrink(snr);
    }
}
