/* DYNAMIC_UPDATE_SLICE, bit-exact with TFLM's: the operand copied to the output with `update`
 * written over it from `start` (int32 or int64 indices, read at run time). Like TFLM, each start
 * index is clamped into [0, operand_dim - update_dim], so the update always fits. Values are moved
 * without looking at them (any element size); the update is one strided copy. */
#ifndef MICROBUILD_KERNELS_DYNAMIC_UPDATE_SLICE_H
#define MICROBUILD_KERNELS_DYNAMIC_UPDATE_SLICE_H

#include <stdint.h>

#include "microbuild/kernels/strided_copy.h"

typedef struct {
    int32_t rank;          /* 1 .. MB_STRIDED_COPY_MAX_DIMS */
    int32_t element_size;  /* bytes: 1, 2, 4 or 8 */
    int32_t start_is_int64;
    int32_t operand_dims[MB_STRIDED_COPY_MAX_DIMS];
    int32_t update_dims[MB_STRIDED_COPY_MAX_DIMS]; /* each <= the operand's */
} mb_dynamic_update_slice_params;

/* output must not overlap update; it may be operand (then nothing is copied first). */
void mb_dynamic_update_slice(const mb_dynamic_update_slice_params *params, const void *operand,
                             const void *update, const void *start, void *output);

#endif
