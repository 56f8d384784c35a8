#include "microbuild/kernels/signal_filter_bank_square_root.h"

#include "microbuild/kernels/signal_common.h"

/* Bit-by-bit square root with TFLM's final rounding (up when the remainder exceeds the root). */
static uint32_t sqrt32(uint32_t num)
{
    if (num == 0) {
        return 0;
    }
    uint32_t res = 0;
    const int32_t top = (int32_t)((32u - mb_sig_msb32(num)) | 1u);
    uint32_t bit = (uint32_t)1 << (31 - top);
    int32_t iterations = (31 - top) / 2 + 1;
    while (iterations-- > 0) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFu) {
        ++res;
    }
    return res & 0xFFFFu; /* TFLM's Sqrt32 returns a uint16 */
}

static uint32_t sqrt64(uint64_t num)
{
    if ((num >> 32) == 0) {
        return sqrt32((uint32_t)num);
    }
    uint64_t res = 0;
    const int32_t top = (int32_t)((64u - mb_sig_msb64(num)) | 1u);
    uint64_t bit = (uint64_t)1 << (63 - top);
    int32_t iterations = (63 - top) / 2 + 1;
    while (iterations-- > 0) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFFFFFu) {
        ++res;
    }
    return (uint32_t)res;
}

void mb_signal_filter_bank_square_root(const uint64_t *input, const int32_t *scale_bits,
                                       int32_t num_channels, uint32_t *output)
{
    /* A shift outside 0..31 is undefined in TFLM's C++; here it gives 0 (or no shift). */
    const int32_t shift = *scale_bits;
    for (int32_t i = 0; i < num_channels; i++) {
        const uint32_t root = sqrt64(input[i]);
        output[i] = shift >= 32 ? 0u : (shift <= 0 ? root : root >> shift);
    }
}
