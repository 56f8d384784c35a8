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
 * (VCTP): masked lanes are neither read nor summed. The four rows' sums are requantized together
 * on 4 lanes (requantize_mve.h's mb_mve_requantize_any_lanes: mb_requantize_fast32's result for
 * any int32 sum) and stored with one narrowing store. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <stddef.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/kernels/fully_connected_requantize.h"
#include "microbuild/kernels/requantize_mve.h"
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
    const int32_t *multipliers = params->output_multipliers;
    const int32_t *shifts = params->output_shifts;
    const int32x4_t tensor_multiplier = vdupq_n_s32(params->output_multiplier);
    const int32x4_t tensor_shift = vdupq_n_s32(params->output_shift);
    const int32x4_t low = vdupq_n_s32(params->activation_min);
    const int32x4_t high = vdupq_n_s32(params->activation_max);
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
            int32x4_t acc = vdupq_n_s32(acc0);
            acc = vsetq_lane_s32(acc1, acc, 1);
            acc = vsetq_lane_s32(acc2, acc, 2);
            acc = vsetq_lane_s32(acc3, acc, 3);
            const int32x4_t scaled =
                multipliers != NULL
                    ? mb_mve_requantize_any_lanes(acc, vld1q_s32(multipliers + c),
                                                  vld1q_s32(shifts + c))
                    : mb_mve_requantize_any_lanes(acc, tensor_multiplier, tensor_shift);
            const int32x4_t out = vaddq_n_s32(scaled, params->output_offset);
            vstrbq_s32(y + c, vminq_s32(vmaxq_s32(out, low), high));
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
