/* TRANSPOSE_CONV int8, Arm DSP variant "dsp" (Cortex-M4/M7/M33/M55): TFLM's scatter one output
 * row at a time (transpose_conv_scatter.h). The widened input and the pre-arranged weights hold
 * int16 pairs, so one word of each feeds SMLAD: two products summed in int32, exactly as the
 * reference (in another order). Depths up to 8 keep the pixel's words in registers across its
 * taps (a fully unrolled copy per depth). */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stddef.h>

#include "microbuild/dsp_words.h"
#include "microbuild/kernels/transpose_conv.h"
#include "microbuild/kernels/transpose_conv_scatter.h"

/* WORDS words of input pairs in registers, then for every tap WORDS SMLAD. */
#define TCONV_DSP_TAPS(WORDS)                                                                  \
    do {                                                                                       \
        int32_t xs[WORDS];                                                                     \
        for (int32_t k = 0; k < (WORDS); k++) {                                                \
            xs[k] = (int32_t)mb_load32(x + 2 * k);                                             \
        }                                                                                      \
        for (int32_t j = 0; j < count; j++, w += 2 * (WORDS)) {                                \
            int32_t s = acc[j];                                                                \
            for (int32_t k = 0; k < (WORDS); k++) {                                            \
                s = __smlad(xs[k], (int32_t)mb_load32(w + 2 * k), s);                          \
            }                                                                                  \
            acc[j] = s;                                                                        \
        }                                                                                      \
    } while (0)

static void taps_dsp(int32_t *acc, const int16_t *x, const int16_t *w, int32_t count,
                     int32_t depth2)
{
    switch (depth2) {
    case 2: TCONV_DSP_TAPS(1); return;
    case 4: TCONV_DSP_TAPS(2); return;
    case 6: TCONV_DSP_TAPS(3); return;
    case 8: TCONV_DSP_TAPS(4); return;
    default: break;
    }
    for (int32_t j = 0; j < count; j++, w += depth2) {
        int32_t s = acc[j];
        for (int32_t c = 0; c < depth2; c += 2) {
            s = __smlad((int32_t)mb_load32(x + c), (int32_t)mb_load32(w + c), s);
        }
        acc[j] = s;
    }
}

void mb_transpose_conv_s8_dsp(const mb_transpose_conv_params *params, const int8_t *input,
                              const int8_t *filter, const int32_t *bias,
                              const int32_t *multipliers, const int32_t *shifts, int8_t *output,
                              int32_t *scratch, void *variant_scratch)
{
    (void)variant_scratch;
    mb_tconv_scatter(params, input, (const int16_t *)(const void *)filter, bias, multipliers,
                     shifts, output, scratch, taps_dsp);
}

#else
typedef int mb_transpose_conv_dsp_unused;
#endif
