/* FULLY_CONNECTED, Helium variant "mve" (Cortex-M55/M85): VMLADAVA over 16 int8 lanes, four
 * output rows per pass over the input.
 *
 * Weights are pre-arranged at compile time (arrange_rows(4, 16)): for every group of four rows,
 * the whole 16-byte chunks of the depth come chunk by chunk, each holding the four rows' 16 bytes
 * one after the other ([depth / 16][4 rows][16]); then the group's last depth % 16 bytes, row
 * after row ([4 rows][depth % 16]); rows left over (output_depth % 4) follow as stored. Same size
 * as the original weights.
 *
 * One vector load of the input feeds four VMLADAVA (sum of 16 int8 x int8 products added to an
 * int32 scalar: exact, the reference's sum in another order). The tail uses tail predication
 * (VCTP): masked lanes are neither read nor summed. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <stddef.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/kernels/fully_connected_requantize.h"
#include "microbuild/quant.h"

void mb_fully_connected_s8_mve(const mb_fully_connected_s8_params *params, const int8_t *input,
                               const int8_t *weights, const int32_t *bias, int8_t *output,
                               void *scratch)
{
    const int32_t depth = params->input_depth;
    const int32_t out_depth = params->output_depth;
    const int32_t groups = out_depth / 4;
    const int32_t chunks = depth / 16;
    const int32_t tail = depth - chunks * 16;
    (void)scratch;
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x_row = input + b * depth;
        int8_t *y = output + b * out_depth;
        const int8_t *w = weights;
        int32_t c = 0;
        for (int32_t g = 0; g < groups; g++, c += 4) {
            int32_t acc0 = bias[c];
            int32_t acc1 = bias[c + 1];
            int32_t acc2 = bias[c + 2];
            int32_t acc3 = bias[c + 3];
            const int8_t *x = x_row;
            for (int32_t k = 0; k < chunks; k++, x += 16, w += 64) {
                const int8x16_t xv = vldrbq_s8(x);
                acc0 = vmladavaq_s8(acc0, xv, vldrbq_s8(w));
                acc1 = vmladavaq_s8(acc1, xv, vldrbq_s8(w + 16));
                acc2 = vmladavaq_s8(acc2, xv, vldrbq_s8(w + 32));
                acc3 = vmladavaq_s8(acc3, xv, vldrbq_s8(w + 48));
            }
            if (tail > 0) {
                const mve_pred16_t p = vctp8q((uint32_t)tail);
                const int8x16_t xv = vldrbq_z_s8(x, p);
                acc0 = vmladavaq_p_s8(acc0, xv, vldrbq_z_s8(w, p), p);
                acc1 = vmladavaq_p_s8(acc1, xv, vldrbq_z_s8(w + tail, p), p);
                acc2 = vmladavaq_p_s8(acc2, xv, vldrbq_z_s8(w + 2 * tail, p), p);
                acc3 = vmladavaq_p_s8(acc3, xv, vldrbq_z_s8(w + 3 * tail, p), p);
                w += 4 * tail;
            }
            y[c] = mb_fc_requantize(params, c, acc0);
            y[c + 1] = mb_fc_requantize(params, c + 1, acc1);
            y[c + 2] = mb_fc_requantize(params, c + 2, acc2);
            y[c + 3] = mb_fc_requantize(params, c + 3, acc3);
        }
        for (; c < out_depth; c++) {
            int32_t acc = bias[c];
            const int8_t *x = x_row;
            for (int32_t k = 0; k < chunks; k++, x += 16, w += 16) {
                acc = vmladavaq_s8(acc, vldrbq_s8(x), vldrbq_s8(w));
            }
            if (tail > 0) {
                const mve_pred16_t p = vctp8q((uint32_t)tail);
                acc = vmladavaq_p_s8(acc, vldrbq_z_s8(x, p), vldrbq_z_s8(w, p), p);
                w += tail;
            }
            y[c] = mb_fc_requantize(params, c, acc);
        }
    }
}

#else
typedef int mb_fully_connected_mve_unused;
#endif
