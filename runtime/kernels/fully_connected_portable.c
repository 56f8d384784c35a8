/* FULLY_CONNECTED, portable C variant "rows4": four output rows per pass over the input.
 *
 * The weights are pre-arranged at compile time (microbuild/compiler/ops/fully_connected.py,
 * arrange_rows(4, 16)): every group of four output rows is stored in 16-byte chunks of the depth,
 * the four rows' chunks one after the other ([depth / 16][4][16]), then the group's last
 * depth % 16 bytes row after row ([4][depth % 16]), so one pointer walks them and every input
 * byte loaded feeds four multiply-accumulates; the rows left over (output_depth % 4) follow row
 * after row, as the model stores them. Same size as the original weights. Sums are the reference's int32 sums in another order (exact). */
#include <stddef.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/kernels/fully_connected_requantize.h"
#include "microbuild/quant.h"

/* Targets whose compilers vectorize a loop over independent int32 lanes (SSE2, NEON): sum each
 * 16-byte chunk in 16 lanes per row, as the reference does, four rows sharing each input load.
 * Elsewhere (Cortex-M0+/M3, RV32, AVR: no vector unit) 64 lanes would live in memory; four scalar
 * accumulators with constant offsets into the chunk stay in registers instead. */
#if defined(__SSE2__) || defined(__ARM_NEON)
#define MB_FC_VECTOR_LANES 1
#endif

void mb_fully_connected_s8_rows4(const mb_fully_connected_s8_params *params,
                                 const int8_t *input, const int8_t *weights, const int32_t *bias,
                                 int8_t *output, void *scratch)
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
#ifdef MB_FC_VECTOR_LANES
            int32_t l0[16], l1[16], l2[16], l3[16];
            for (int32_t j = 0; j < 16; j++) {
                l0[j] = l1[j] = l2[j] = l3[j] = 0;
            }
            for (int32_t k = 0; k < chunks; k++, x += 16, w += 64) {
                for (int32_t j = 0; j < 16; j++) {
                    l0[j] += w[j] * x[j];
                }
                for (int32_t j = 0; j < 16; j++) {
                    l1[j] += w[16 + j] * x[j];
                }
                for (int32_t j = 0; j < 16; j++) {
                    l2[j] += w[32 + j] * x[j];
                }
                for (int32_t j = 0; j < 16; j++) {
                    l3[j] += w[48 + j] * x[j];
                }
            }
            for (int32_t j = 0; j < 16; j++) {
                acc0 += l0[j];
                acc1 += l1[j];
                acc2 += l2[j];
                acc3 += l3[j];
            }
#else
            for (int32_t k = 0; k < chunks; k++, x += 16, w += 64) {
                for (int32_t j = 0; j < 16; j++) {
                    const int32_t xv = x[j];
                    acc0 += w[j] * xv;
                    acc1 += w[16 + j] * xv;
                    acc2 += w[32 + j] * xv;
                    acc3 += w[48 + j] * xv;
                }
            }
#endif
            for (int32_t t = 0; t < tail; t++) {
                const int32_t xv = x[t];
                acc0 += w[t] * xv;
                acc1 += w[tail + t] * xv;
                acc2 += w[2 * tail + t] * xv;
                acc3 += w[3 * tail + t] * xv;
            }
            w += 4 * tail;
            y[c] = mb_fc_requantize(params, c, acc0);
            y[c + 1] = mb_fc_requantize(params, c + 1, acc1);
            y[c + 2] = mb_fc_requantize(params, c + 2, acc2);
            y[c + 3] = mb_fc_requantize(params, c + 3, acc3);
        }
        for (; c < out_depth; c++, w += depth) {
            int32_t acc0 = bias[c];
            int32_t acc1 = 0;
            int32_t d = 0;
            for (; d + 2 <= depth; d += 2) {
                acc0 += w[d] * x_row[d];
                acc1 += w[d + 1] * x_row[d + 1];
            }
            if (d < depth) {
                acc0 += w[d] * x_row[d];
            }
            y[c] = mb_fc_requantize(params, c, acc0 + acc1);
        }
    }
}
