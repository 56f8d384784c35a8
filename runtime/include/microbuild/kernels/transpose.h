/* TRANSPOSE of up to 6 dimensions, any element size, bit-exact with TFLM's reference Transpose (it
 * moves values; nothing is rescaled); DEPTH_TO_SPACE and SPACE_TO_DEPTH run on it too. The output
 * is written in order; an odometer over the output's dimensions steps through the input with the
 * permuted strides, prepared at compile time with the dimensions that walk the input as one
 * merged, so an innermost input step of 1 is a run of contiguous bytes copied as such. PyTorch
 * exports put one after an NCHW input; the one before flatten + Linear never runs
 * (microbuild/compiler/transpose_folding.py folds it into the weights). */
#ifndef MICROBUILD_KERNELS_TRANSPOSE_H
#define MICROBUILD_KERNELS_TRANSPOSE_H

#include <stdint.h>

#define MB_TRANSPOSE_MAX_DIMS 6

typedef struct {
    int32_t num_dims;
    int32_t element_size;                       /* bytes: 1, 2 or 4 */
    int32_t output_dims[MB_TRANSPOSE_MAX_DIMS];
    /* input elements to step for one step of each output dimension */
    int32_t input_strides[MB_TRANSPOSE_MAX_DIMS];
} mb_transpose_params;

void mb_transpose(const mb_transpose_params *params, const void *input, void *output);

#endif
