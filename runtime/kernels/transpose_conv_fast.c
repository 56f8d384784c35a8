/* TRANSPOSE_CONV int8, portable variant "fast": TFLM's scatter one output row at a time
 * (transpose_conv_scatter.h), products of widened input pairs and pre-arranged int16 weights.
 * Any CPU. */
#include <stddef.h>

#include "microbuild/kernels/transpose_conv.h"
#include "microbuild/kernels/transpose_conv_scatter.h"

static void taps_fast(int32_t *acc, const int16_t *x, const int16_t *w, int32_t columns,
                      int32_t oc, int32_t depth2)
{
    const int32_t count = columns * oc;
    for (int32_t j = 0; j < count; j++, w += depth2) {
        int32_t s = acc[j];
        for (int32_t c = 0; c < depth2; c += 2) {
            s += x[c] * w[c] + x[c + 1] * w[c + 1];
        }
        acc[j] = s;
    }
}

void mb_transpose_conv_s8_fast(const mb_transpose_conv_params *params, const int8_t *input,
                               const int8_t *filter, const int32_t *bias,
                               const int32_t *multipliers, const int32_t *shifts, int8_t *output,
                               int32_t *scratch, void *variant_scratch)
{
    (void)variant_scratch;
    mb_tconv_scatter(params, input, (const int16_t *)(const void *)filter, bias, multipliers,
                     shifts, output, scratch, taps_fast,
                     mb_tconv_requantize_row);
}
