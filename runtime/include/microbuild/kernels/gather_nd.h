/* GATHER_ND, bit-exact with TFLM's: each row of `index_depth` int32 indices picks one slice of
 * `slice_size` elements of the input (the dimensions after the indexed ones). Like TFLM, a row's
 * position is sum(index[j] * dim_strides[j]) and only that flat position is checked (it must be
 * at least 0 and leave a whole slice inside the input): the first row outside stops the copy and
 * the kernel returns non-zero (TFLM's kTfLiteError); the generated run() then returns
 * MB_GATHER_INDEX_ERROR (gather.h). Any element size; TFLM takes int8 and float32. */
#ifndef MICROBUILD_KERNELS_GATHER_ND_H
#define MICROBUILD_KERNELS_GATHER_ND_H

#include <stdint.h>

#include "microbuild/kernels/gather.h"

#define MB_GATHER_ND_MAX_DEPTH 8

typedef struct {
    int32_t element_size; /* bytes: 1, 2, 4 or 8 */
    int32_t num_slices;   /* index rows */
    int32_t index_depth;  /* indices per row, 1 .. MB_GATHER_ND_MAX_DEPTH */
    int32_t slice_size;   /* elements per slice */
    int32_t input_size;   /* elements of the input */
    int32_t dim_strides[MB_GATHER_ND_MAX_DEPTH]; /* elements per step of each indexed dimension */
} mb_gather_nd_params;

/* 0 on success, -1 when a row's position is outside the input (the output is partly written). */
int32_t mb_gather_nd(const mb_gather_nd_params *params, const void *input,
                     const int32_t *indices, void *output);

#endif
