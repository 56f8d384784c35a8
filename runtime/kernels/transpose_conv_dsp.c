/* TRANSPOSE_CONV int8, Arm DSP variant "dsp" (Cortex-M4/M7/M33/M55): TFLM's scatter one output
 * row at a time (transpose_conv_scatter.h). The widened input and the pre-arranged weights hold
 * int16 pairs, so one word of each feeds SMLAD: two products summed in int32, exactly as the
 * reference (in another order); requantization with SMMULR (the compiler checks the sums'
 * bound). Depths up to 8 keep the pixel's words in registers across its
 * taps (a fully unrolled copy per depth). */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stddef.h>

#include "microbuild/dsp_words.h"
#include "microbuild/kernels/transpose_conv.h"
#include "microbuild/kernels/transpose_conv_scatter.h"

/* One channel of the accumulator row requantized with SMMULR (dsp_words.h's mb_rescale_small):
 * the compiler checks that every sum of the channel, shifted left by its left shift + 1, stays
 * in int32. */
static __attribute__((noinline)) void requantize_channel_dsp(
    const int32_t *acc, int8_t *out, int32_t count, int32_t stride, int32_t multiplier,
    int32_t shift, int32_t out_offset, int32_t lo, int32_t hi)
{
    const int32_t lshift = (shift > 0 ? shift : 0) + 1;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int8_t *end = out + count * stride;
    if (right == 0) {
        for (; out != end; acc += stride, out += stride) {
            const int32_t v = mb_smmulr(*acc << lshift, multiplier) + out_offset;
            *out = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
        }
        return;
    }
    const int32_t half = (int32_t)((uint32_t)1 << (right - 1));
    for (; out != end; acc += stride, out += stride) {
        const int32_t v = mb_rescale_small(*acc, lshift, multiplier, half, right) + out_offset;
        *out = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
    }
}

static void requantize_row_dsp(const mb_transpose_conv_params *p, const int32_t *acc,
                               const int32_t *multipliers, const int32_t *shifts, int8_t *out)
{
    const int32_t oc = p->output_c;
    for (int32_t o = 0; o < oc; o++) {
        requantize_channel_dsp(acc + o, out + o, p->output_w, oc, multipliers[o], shifts[o],
                               p->output_offset, p->activation_min, p->activation_max);
    }
}

void mb_transpose_conv_s8_dsp(const mb_transpose_conv_params *params, const int8_t *input,
                              const int8_t *filter, const int32_t *bias,
                              const int32_t *multipliers, const int32_t *shifts, int8_t *output,
                              int32_t *scratch, void *variant_scratch)
{
    (void)variant_scratch;
    mb_tconv_scatter(params, input, (const int16_t *)(const void *)filter, bias, multipliers,
                     shifts, output, scratch, mb_tconv_taps_dsp,
                     requantize_row_dsp);
}

#else
typedef int mb_transpose_conv_dsp_unused;
#endif
