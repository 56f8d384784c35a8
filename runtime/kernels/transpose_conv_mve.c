/* TRANSPOSE_CONV int8, Helium variant "mve" (Cortex-M55/M85): TFLM's scatter one output row at
 * a time (transpose_conv_scatter.h). One vector load of a widened input pixel (8 int16 lanes,
 * tail-predicated: masked lanes are neither read nor summed) feeds a VMLADAVA per tap: the
 * products summed into the int32 accumulator, exactly as the reference (in another order). */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <stddef.h>

#include "microbuild/kernels/transpose_conv.h"
#include "microbuild/kernels/transpose_conv_scatter.h"

static void taps_mve(int32_t *acc, const int16_t *x, const int16_t *w, int32_t count,
                     int32_t depth2)
{
    if (depth2 <= 8) {  /* the pixel in one vector: no loop over the depth */
        const mve_pred16_t m = vctp16q((uint32_t)depth2);
        const int16x8_t xv = vldrhq_z_s16(x, m);
        for (int32_t j = 0; j < count; j++, w += depth2) {
            acc[j] = vmladavaq_p_s16(acc[j], xv, vldrhq_z_s16(w, m), m);
        }
        return;
    }
    for (int32_t j = 0; j < count; j++, w += depth2) {
        int32_t s = acc[j];
        for (int32_t c = 0; c < depth2; c += 8) {
            const mve_pred16_t m = vctp16q((uint32_t)(depth2 - c));
            s = vmladavaq_p_s16(s, vldrhq_z_s16(x + c, m), vldrhq_z_s16(w + c, m), m);
        }
        acc[j] = s;
    }
}

void mb_transpose_conv_s8_mve(const mb_transpose_conv_params *params, const int8_t *input,
                              const int8_t *filter, const int32_t *bias,
                              const int32_t *multipliers, const int32_t *shifts, int8_t *output,
                              int32_t *scratch, void *variant_scratch)
{
    (void)variant_scratch;
    mb_tconv_scatter(params, input, (const int16_t *)(const void *)filter, bias, multipliers,
                     shifts, output, scratch, taps_mve);
}

#else
typedef int mb_transpose_conv_mve_unused;
#endif
