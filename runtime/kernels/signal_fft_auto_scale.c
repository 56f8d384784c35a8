#include "microbuild/kernels/signal_fft_auto_scale.h"

#include <string.h>

#include "microbuild/kernels/signal_common.h"

/* TFLM's MaxAbs16, sample by sample: its running maximum is an int16, so -32768 wraps. */
static int16_t max_abs_in_order(const int16_t *input, int32_t size)
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
    return max;
}

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && !defined(__ARM_BIG_ENDIAN)
#include <arm_acle.h>

/* Only the most significant bit of the maximum matters, and without a -32768 the maximum is the
 * largest |sample|, whose top bit is the top bit of all the |sample| OR-ed together. Two samples
 * per word: SSUB16 negates both and sets each half's GE flag where the negation is >= 0, SEL
 * takes it there: |sample| per half, with -32768 alone giving 0x8000. If one did, the samples
 * are scanned again in TFLM's order (its wrapped maximum depends on where -32768 comes). */
static uint32_t max_abs_top_bits(const int16_t *input, int32_t size)
{
    uint32_t bits = 0;
    int32_t i = 0;
    for (; i + 4 <= size; i += 4) { /* two words per pass: half the loop's overhead */
        int32_t first, second; /* two scalars: an array would go through the stack */
        memcpy(&first, &input[i], sizeof(first));
        memcpy(&second, &input[i + 2], sizeof(second));
        bits |= (uint32_t)__sel(__ssub16(0, first), first);
        bits |= (uint32_t)__sel(__ssub16(0, second), second);
    }
    for (; i + 2 <= size; i += 2) {
        int32_t pair;
        memcpy(&pair, &input[i], sizeof(pair));
        bits |= (uint32_t)__sel(__ssub16(0, pair), pair);
    }
    if (i < size) {
        const int32_t value = input[i];
        bits |= (uint32_t)(value < 0 ? -value : value);
    }
    if ((bits & 0x80008000u) != 0) {
        return (uint16_t)max_abs_in_order(input, size);
    }
    return (bits & 0xFFFFu) | (bits >> 16);
}

/* output = input << bits kept to 16 bits, two samples per word: each half times 2^bits (SMLABB,
 * SMLATB with 0 added: GCC 12 has no __smulbb), the low 16 bits of both packed back; two words
 * per pass. */
static inline uint32_t shift_pair(int32_t pair, int32_t scale)
{
    const uint32_t low = (uint32_t)__smlabb(pair, scale, 0) & 0xFFFFu;
    return low | ((uint32_t)__smlatb(pair, scale, 0) << 16);
}

static void shift_left(const int16_t *input, int32_t size, int32_t bits, int16_t *output)
{
    const int32_t scale = (int32_t)1 << bits;
    int32_t i = 0;
    for (; i + 4 <= size; i += 4) {
        int32_t first, second;
        memcpy(&first, &input[i], sizeof(first));
        memcpy(&second, &input[i + 2], sizeof(second));
        first = (int32_t)shift_pair(first, scale);
        second = (int32_t)shift_pair(second, scale);
        memcpy(&output[i], &first, sizeof(first));
        memcpy(&output[i + 2], &second, sizeof(second));
    }
    for (; i < size; i++) {
        output[i] = mb_sig_wrap16((int32_t)input[i] * scale);
    }
}

#else

static uint32_t max_abs_top_bits(const int16_t *input, int32_t size)
{
    return (uint32_t)(int32_t)max_abs_in_order(input, size);
}

static void shift_left(const int16_t *input, int32_t size, int32_t bits, int16_t *output)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = mb_sig_wrap16((int32_t)input[i] * ((int32_t)1 << bits));
    }
}

#endif

void mb_signal_fft_auto_scale(const int16_t *input, int32_t size, int16_t *output,
                              int32_t *scale_bits)
{
    /* TFLM passes the int16 maximum to MostSignificantBit32(uint32_t): a negative one becomes a
     * huge value and the shift 0. max_abs_top_bits gives that value, or one with the same top
     * bit. */
    int32_t bits = 16 - (int32_t)mb_sig_msb32(max_abs_top_bits(input, size)) - 1;
    if (bits <= 0) {
        bits = 0;
    }
    shift_left(input, size, bits, output);
    *scale_bits = bits;
}
