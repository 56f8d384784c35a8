/* GATHER, bit-exact with TFLM's (it copies slices of the input picked by int32 indices, any
 * element type; TFLM itself takes int8 and float32). The input is seen as
 * [batch][outer][axis][inner] and the indices as [batch][coords]; sizes come from the compile
 * time. Like TFLM, an index outside [0, axis_size) stops the copy and the kernel returns non-zero
 * (TFLM's kTfLiteError); the generated run() then returns MB_GATHER_INDEX_ERROR. */
#ifndef MICROBUILD_KERNELS_GATHER_H
#define MICROBUILD_KERNELS_GATHER_H

#include <stdint.h>

/* What <prefix>_run returns when a run-time index is out of range. */
#define MB_GATHER_INDEX_ERROR (-2)

typedef struct {
    int32_t element_size; /* bytes: 1, 2, 4 or 8 */
    int32_t batch_size;
    int32_t outer_size;
    int32_t axis_size;
    int32_t coord_size;   /* indices per batch */
    int32_t inner_size;   /* elements per gathered slice */
} mb_gather_params;

/* 0 on success, -1 when an index is out of range (the output is then partly written). */
int32_t mb_gather(const mb_gather_params *params, const void *input, const int32_t *indices,
                  void *output);

#endif
