/* FULLY_CONNECTED consuming a row-streamed producer (microbuild/compiler/row_stream_fc.py): the
 * op's int8 input arrives a band of columns at a time (a band of its producer's output rows), so
 * each call adds the band's products to the int32 sums of every output row and the last band
 * requantizes them. The sums are exact integers and integer addition is associative, so the
 * result is the op-by-op kernel's, bit for bit, while the whole input never exists at once.
 *
 * Weights keep the model's layout ([output_depth][input_depth]): a band is then columns
 * [col0, col0 + cols) of every row, at any column. The bias is the folded one of
 * fully_connected.h. One pass of the input band feeds four output rows; the inner product is
 * Helium's VMLADAVA on 16 lanes, the Arm DSP's SMLAD on sign-extended pairs, or portable C,
 * whichever the target compiles for. */
#include <stddef.h>
#include <stdint.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/kernels/fully_connected_requantize.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

/* Four weight rows (``stride`` bytes apart) against the band: 16 int8 products per VMLADAVA;
 * the tail predicated (masked lanes neither read nor summed). */
static void band_dot4(const int8_t *x, const int8_t *w, int32_t stride, int32_t n, int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int8_t *w1 = w + stride, *w2 = w + 2 * stride, *w3 = w + 3 * stride;
    int32_t d = 0;
    for (; d + 16 <= n; d += 16) {
        const int8x16_t xv = vldrbq_s8(x + d);
        a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w + d));
        a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w1 + d));
        a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w2 + d));
        a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w3 + d));
    }
    if (d < n) {
        const mve_pred16_t p = vctp8q((uint32_t)(n - d));
        const int8x16_t xv = vldrbq_z_s8(x + d, p);
        a0 = vmladavaq_p_s8(a0, xv, vldrbq_z_s8(w + d, p), p);
        a1 = vmladavaq_p_s8(a1, xv, vldrbq_z_s8(w1 + d, p), p);
        a2 = vmladavaq_p_s8(a2, xv, vldrbq_z_s8(w2 + d, p), p);
        a3 = vmladavaq_p_s8(a3, xv, vldrbq_z_s8(w3 + d, p), p);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

static int32_t band_dot1(const int8_t *x, const int8_t *w, int32_t n, int32_t acc)
{
    int32_t d = 0;
    for (; d + 16 <= n; d += 16) {
        acc = vmladavaq_s8(acc, vldrbq_s8(x + d), vldrbq_s8(w + d));
    }
    if (d < n) {
        const mve_pred16_t p = vctp8q((uint32_t)(n - d));
        acc = vmladavaq_p_s8(acc, vldrbq_z_s8(x + d, p), vldrbq_z_s8(w + d, p), p);
    }
    return acc;
}

#elif defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>

#include "microbuild/dsp_words.h"

/* Four weight rows against the band, 4 columns at a time: the input word is split into its
 * even and odd bytes once (SXTB16) for all four rows; each row's word likewise, two SMLAD. One
 * GCC's pre-allocation scheduling would hoist the loads and spill the sums (as in
 * fully_connected_dsp.c): without it the loop stays in registers. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-schedule-insns")))
#endif
static void band_dot4(const int8_t *x, const int8_t *w, int32_t stride, int32_t n, int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int8_t *w1 = w + stride, *w2 = w + 2 * stride, *w3 = w + 3 * stride;
    int32_t d = 0;
    for (; d + 4 <= n; d += 4) {
        const uint32_t xv = mb_load32(x + d);
        const int32_t xe = mb_even16(xv), xo = mb_odd16(xv);
        uint32_t v = mb_load32(w + d);
        a0 = __smlad(mb_even16(v), xe, __smlad(mb_odd16(v), xo, a0));
        v = mb_load32(w1 + d);
        a1 = __smlad(mb_even16(v), xe, __smlad(mb_odd16(v), xo, a1));
        v = mb_load32(w2 + d);
        a2 = __smlad(mb_even16(v), xe, __smlad(mb_odd16(v), xo, a2));
        v = mb_load32(w3 + d);
        a3 = __smlad(mb_even16(v), xe, __smlad(mb_odd16(v), xo, a3));
    }
    for (; d < n; d++) {
        const int32_t xv = x[d];
        a0 += xv * w[d], a1 += xv * w1[d], a2 += xv * w2[d], a3 += xv * w3[d];
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

static int32_t band_dot1(const int8_t *x, const int8_t *w, int32_t n, int32_t acc)
{
    int32_t d = 0;
    for (; d + 4 <= n; d += 4) {
        const uint32_t xv = mb_load32(x + d), wv = mb_load32(w + d);
        acc = __smlad(mb_even16(wv), mb_even16(xv), __smlad(mb_odd16(wv), mb_odd16(xv), acc));
    }
    for (; d < n; d++) {
        acc += (int32_t)x[d] * w[d];
    }
    return acc;
}

#else

static void band_dot4(const int8_t *x, const int8_t *w, int32_t stride, int32_t n, int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (int32_t d = 0; d < n; d++) {
        const int32_t xv = x[d];
        a0 += xv * w[d];
        a1 += xv * w[stride + d];
        a2 += xv * w[2 * stride + d];
        a3 += xv * w[3 * stride + d];
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

static int32_t band_dot1(const int8_t *x, const int8_t *w, int32_t n, int32_t acc)
{
    for (int32_t d = 0; d < n; d++) {
        acc += (int32_t)x[d] * w[d];
    }
    return acc;
}

#endif

void mb_fully_connected_s8_band(const mb_fully_connected_s8_params *params, const int8_t *input,
                                const int8_t *weights, int32_t col0, int32_t cols, int32_t *sums,
                                const int32_t *bias, int8_t *output)
{
    const int32_t depth = params->input_depth;
    const int32_t out_depth = params->output_depth;
    /* The first band starts from the bias, the others from the sums so far; the last one
     * writes the outputs instead of the sums. */
    const int32_t *start = col0 == 0 ? bias : sums;
    const int last = col0 + cols >= depth;
    const int8_t *w = weights + col0;
    int32_t c = 0;
    for (; c + 4 <= out_depth; c += 4) {
        int32_t acc[4] = {start[c], start[c + 1], start[c + 2], start[c + 3]};
        band_dot4(input, w + c * depth, depth, cols, acc);
        for (int32_t k = 0; k < 4; k++) {
            if (last) {
                output[c + k] = mb_fc_requantize(params, c + k, acc[k]);
            } else {
                sums[c + k] = acc[k];
            }
        }
    }
    for (; c < out_depth; c++) {
        const int32_t acc = band_dot1(input, w + c * depth, cols, start[c]);
        if (last) {
            output[c] = mb_fc_requantize(params, c, acc);
        } else {
            sums[c] = acc;
        }
    }
}
