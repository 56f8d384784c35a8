/* Data movement by per-dimension offset tables: RESIZE_NEAREST_NEIGHBOR, MIRROR_PAD and
 * BATCH_TO_SPACE_ND, bit-exact with TFLM's reference kernels (values are copied, never rescaled).
 *
 * Each of these ops reads, for every output index (o0, o1, ..., o{n-1}), the input element at a
 * byte offset that is a sum of one term per output dimension: table_0[o0] + table_1[o1] + ...
 * The compiler works out every term (TFLM's float nearest-neighbour arithmetic, the mirror's
 * reflection, the batch-to-space shuffle and crops) and emits the tables; the kernel walks the
 * output in order and copies a run of unit_bytes contiguous input bytes per step (the channels,
 * or whatever trailing dimensions are moved unchanged). */
#ifndef MICROBUILD_KERNELS_TABLE_GATHER_H
#define MICROBUILD_KERNELS_TABLE_GATHER_H

#include <stdint.h>

#define MB_TABLE_GATHER_MAX_DIMS 6

typedef struct {
    int32_t num_dims;                               /* 1 .. MB_TABLE_GATHER_MAX_DIMS */
    int32_t unit_bytes;                             /* bytes copied per table step */
    int32_t output_dims[MB_TABLE_GATHER_MAX_DIMS];  /* output extent of each tabled dimension */
} mb_table_gather_params;

/* offsets holds output_dims[0] + ... + output_dims[num_dims - 1] input byte offsets: the table of
 * dimension 0, then the table of dimension 1, and so on. */
void mb_table_gather(const mb_table_gather_params *params, const int32_t *offsets,
                     const void *input, void *output);

#endif
