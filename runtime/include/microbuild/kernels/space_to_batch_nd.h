/* Int8 SPACE_TO_BATCH_ND (3-D NHC and 4-D NHWC), bit-exact with TFLM's reference SpaceToBatchND.
 *
 * Output batch (sh * block_w + sw) * batches + b, row oh, column ow holds input pixel
 * (b, oh * block_h + sh - pad_top, ow * block_w + sw - pad_left), or pad_value where that lies in
 * the padding: the output zero point (TFLM leaves its fill value uninitialized, see
 * microbuild/compiler/ops/space_batch.py). A 3-D input is an NHWC one of width 1. */
#ifndef MICROBUILD_KERNELS_SPACE_TO_BATCH_ND_H
#define MICROBUILD_KERNELS_SPACE_TO_BATCH_ND_H

#include <stdint.h>

typedef struct {
    int32_t batches, input_h, input_w;
    int32_t pixel_bytes;                     /* channels * element size */
    int32_t output_h, output_w;
    int32_t block_h, block_w;
    int32_t pad_top, pad_left;
    int32_t pad_value;                       /* the int8 the padding is filled with */
} mb_space_to_batch_nd_params;

void mb_space_to_batch_nd(const mb_space_to_batch_nd_params *params, const void *input,
                          void *output);

#endif
