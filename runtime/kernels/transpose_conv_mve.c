/* TRANSPOSE_CONV int8, Helium variant "mve" (Cortex-M55/M85): TFLM's scatter one output row at
 * a time (transpose_conv_scatter.h), vectorised over output channels: 4 int32 accumulators per
 * vector (when output_c is a multiple of 4; otherwise the dsp variant's SMLAD taps on its
 * weight layout), each input value times
 * the vector of its weights for those channels (VMLA by a scalar, int16 weights widened by the
 * load), so the sums are the reference's int32 sums in another order. The weights are arranged
 * [filter_h][filter_w][depth2][output_c] for it. The row is requantized 4 channels at a time
 * (requantize_mve.h: the compiler checks its accumulator bound) and narrowed by the store. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <stddef.h>

#include "microbuild/kernels/requantize_mve.h"
#include "microbuild/kernels/transpose_conv.h"
#include "microbuild/kernels/transpose_conv_scatter.h"

/* DEPTH2 input values in registers, then for each column and block of 4 channels one VMLA per
 * value: a macro so the usual small depths get fully unrolled copies. */
#define TCONV_MVE_TAPS(DEPTH2)                                                                 \
    do {                                                                                       \
        int32_t xs[DEPTH2];                                                                    \
        for (int32_t c = 0; c < (DEPTH2); c++) {                                               \
            xs[c] = x[c];                                                                      \
        }                                                                                      \
        for (int32_t k = 0; k < columns; k++, acc += oc, w += oc * (DEPTH2)) {                 \
            for (int32_t o = 0; o < oc; o += 4) {                                              \
                int32x4_t a = vldrwq_s32(acc + o);                                             \
                for (int32_t c = 0; c < (DEPTH2); c++) {                                       \
                    a = vmlaq_n_s32(a, vldrhq_s32(w + c * oc + o), xs[c]);                     \
                }                                                                              \
                vstrwq_s32(acc + o, a);                                                        \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* oc is a multiple of 4. */
static void taps_mve(int32_t *acc, const int16_t *x, const int16_t *w, int32_t columns,
                     int32_t oc, int32_t depth2)
{
    switch (depth2) {
    case 2: TCONV_MVE_TAPS(2); return;
    case 4: TCONV_MVE_TAPS(4); return;
    case 6: TCONV_MVE_TAPS(6); return;
    case 8: TCONV_MVE_TAPS(8); return;
    default: break;
    }
    for (int32_t k = 0; k < columns; k++, acc += oc, w += oc * depth2) {
        for (int32_t o = 0; o < oc; o += 4) {
            int32x4_t a = vldrwq_s32(acc + o);
            const int16_t *wc = w + o;
            for (int32_t c = 0; c < depth2; c++, wc += oc) {
                a = vmlaq_n_s32(a, vldrhq_s32(wc), x[c]);
            }
            vstrwq_s32(acc + o, a);
        }
    }
}

static void requantize_row_mve(const mb_transpose_conv_params *p, const int32_t *acc,
                               const int32_t *multipliers, const int32_t *shifts, int8_t *out)
{
    const int32_t oc = p->output_c;
    const int32_t out_offset = p->output_offset;
    const int32x4_t amin = vdupq_n_s32(p->activation_min);
    const int32x4_t amax = vdupq_n_s32(p->activation_max);
    for (int32_t o = 0; o < oc; o += 4) {
        const mve_pred16_t m = vctp32q((uint32_t)(oc - o));
        const int32x4_t mult = vldrwq_z_s32(multipliers + o, m);
        const mb_mve_shifts s = mb_mve_split_shifts(vldrwq_z_s32(shifts + o, m));
        const int32_t *a = acc + o;
        int8_t *y = out + o;
        for (int32_t i = 0; i < p->output_w; i++, a += oc, y += oc) {
            const int32x4_t v = mb_mve_requantize(vldrwq_z_s32(a, m), mult, s, out_offset, amin,
                                                  amax);
            vstrbq_p_s32(y, v, m);
        }
    }
}

void mb_transpose_conv_s8_mve(const mb_transpose_conv_params *params, const int8_t *input,
                              const int8_t *filter, const int32_t *bias,
                              const int32_t *multipliers, const int32_t *shifts, int8_t *output,
                              int32_t *scratch, void *variant_scratch)
{
    (void)variant_scratch;
    /* other channel counts: the weights as the dsp variant's, its SMLAD taps (Helium cores have
     * the DSP extension) */
    mb_tconv_scatter(params, input, (const int16_t *)(const void *)filter, bias, multipliers,
                     shifts, output, scratch,
                     params->output_c % 4 == 0 ? taps_mve : mb_tconv_taps_dsp,
                     requantize_row_mve);
}

#else
typedef int mb_transpose_conv_mve_unused;
#endif
