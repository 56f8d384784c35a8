/* A strided copy of up to 6 dimensions, any element size (1, 2, 4 or 8 bytes): the one kernel
 * behind STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, PACK and UNPACK, which TFLM implements as loops
 * that move values without looking at them (bit-exact whatever the type). Everything the loops
 * need is worked out at compile time: an odometer over `counts` steps the source and the
 * destination by their own strides (in elements; source strides may be negative for a reversed
 * STRIDED_SLICE), starting at the given offsets. Rows whose elements are contiguous on both sides
 * are copied with memcpy. */
#ifndef MICROBUILD_KERNELS_STRIDED_COPY_H
#define MICROBUILD_KERNELS_STRIDED_COPY_H

#include <stdint.h>

#define MB_STRIDED_COPY_MAX_DIMS 6

typedef struct {
    int32_t num_dims;                               /* 1 .. MB_STRIDED_COPY_MAX_DIMS */
    int32_t element_size;                           /* bytes: 1, 2, 4 or 8 */
    int32_t src_offset;                             /* elements of the source before the first */
    int32_t dst_offset;                             /* elements of the destination before it */
    int32_t counts[MB_STRIDED_COPY_MAX_DIMS];       /* iterations per dimension, outermost first */
    int32_t src_steps[MB_STRIDED_COPY_MAX_DIMS];    /* source elements per step */
    int32_t dst_steps[MB_STRIDED_COPY_MAX_DIMS];    /* destination elements per step */
} mb_strided_copy_params;

void mb_strided_copy(const mb_strided_copy_params *params, const void *input, void *output);

#endif
