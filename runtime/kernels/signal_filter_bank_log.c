#include "microbuild/kernels/signal_filter_bank_log.h"

#include "microbuild/kernels/signal_common.h"

#define SCALE_BITS 16
#define SEGMENT_BITS 7
#define LN2_Q16 45426u /* ln(2) in Q16 */

static uint32_t log2_fraction(uint32_t x, uint32_t log2x, const uint16_t *lut)
{
    /* x without its top bit, as a 16-bit fraction of it (frac < 2^16 either way). */
    int32_t frac = (int32_t)(x - ((uint32_t)1 << log2x));
    if (log2x < SCALE_BITS) {
        frac <<= SCALE_BITS - log2x;
    } else {
        frac >>= log2x - SCALE_BITS;
    }
    const uint32_t segment = (uint32_t)frac >> (SCALE_BITS - SEGMENT_BITS);
    const int32_t c0 = lut[segment];
    const int32_t c1 = lut[segment + 1];
    const int32_t segment_start = (int32_t)(segment << (SCALE_BITS - SEGMENT_BITS));
    const int32_t rel = mb_sig_asr32((c1 - c0) * (frac - segment_start), SCALE_BITS);
    return (uint32_t)(frac + c0 + rel);
}

static uint32_t log32(uint32_t x, uint32_t out_scale, const uint16_t *lut)
{
    const uint32_t integer = mb_sig_msb32(x) - 1;
    const uint32_t fraction = log2_fraction(x, integer, lut);
    const uint32_t log2 = (integer << SCALE_BITS) + fraction;
    const uint32_t round = (uint32_t)1 << (SCALE_BITS - 1);
    const uint32_t loge = (uint32_t)(((uint64_t)LN2_Q16 * log2 + round) >> SCALE_BITS);
    return (out_scale * loge + round) >> SCALE_BITS; /* uint32 arithmetic, as TFLM */
}

void mb_signal_filter_bank_log(const uint32_t *input, int32_t num_channels, uint32_t output_scale,
                               int32_t correction_bits, const uint16_t *log_lut,
                               int16_t *output)
{
    for (int32_t i = 0; i < num_channels; i++) {
        const uint32_t scaled = input[i] << correction_bits;
        if (scaled > 1) {
            const uint32_t value = log32(scaled, output_scale, log_lut);
            output[i] = (int16_t)(value < 32767u ? value : 32767u);
        } else {
            output[i] = 0;
        }
    }
}
