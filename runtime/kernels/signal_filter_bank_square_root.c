#include "microbuild/kernels/signal_filter_bank_square_root.h"

#include "microbuild/kernels/signal_common.h"

#if (defined(__ARM_FP) && (__ARM_FP & 8)) || defined(__x86_64__) || defined(__aarch64__)
/* With a double-precision FPU (Cortex-M7, the host) the bit loop's result (#else) comes from
 * the hardware square root instead: the double nearest num is within 2^-53 of it, so the
 * truncated root is floor(sqrt(num)) or one off, which two integer checks correct; then TFLM's
 * rounding on the exact remainder. The same bits, without 16 or 32 rounds of the loop. */
#include <math.h>

static uint32_t sqrt_rounded(uint64_t num)
{
    const double value = (double)(uint32_t)(num >> 32) * 4294967296.0 + (double)(uint32_t)num;
    const double estimate = sqrt(value);
    uint64_t root = estimate >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)estimate;
    while (root * root > num) {
        root--;
    }
    if (root < 0xFFFFFFFFu && (root + 1) * (root + 1) <= num) {
        root++;
    }
    /* sqrt32's result is a uint16, sqrt64's a uint32: neither rounds past its top value. */
    const uint64_t top = (num >> 32) != 0 ? 0xFFFFFFFFu : 0xFFFFu;
    if (num - root * root > root && root != top) {
        root++;
    }
    return (uint32_t)root;
}
#else
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

static uint32_t sqrt_rounded(uint64_t num)
{
    return sqrt64(num);
}
#endif

void mb_signal_filter_bank_square_root(const uint64_t *input, const int32_t *scale_bits,
                                       int32_t num_channels, uint32_t *output)
{
    /* A shift outside 0..31 is undefined in TFLM's C++; here it gives 0 (or no shift). */
    const int32_t shift = *scale_bits;
    for (int32_t i = 0; i < num_channels; i++) {
        const uint32_t root = sqrt_rounded(input[i]);
        output[i] = shift >= 32 ? 0u : (shift <= 0 ? root : root >> shift);
    }
}
