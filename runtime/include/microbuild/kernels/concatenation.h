/* Int8 CONCATENATION along any axis, bit-exact with TFLM's reference_ops::Concatenation.
 *
 * A byte copy: TFLM does not rescale int8 inputs (the converter gives every input the output's
 * scale and zero point, and the compiler checks that). Viewed around the axis, each tensor is
 * `outer` blocks; output block k is input 0's block k, then input 1's block k, and so on, where
 * input i's block has block_sizes[i] elements (its axis length times the inner dimensions). */
#ifndef MICROBUILD_KERNELS_CONCATENATION_H
#define MICROBUILD_KERNELS_CONCATENATION_H

#include <stdint.h>

/* The blocks are counted in bytes and the values are copied as bytes: wider element types (int16
 * in 16x8 models) are passed with block sizes times the element size. */

void mb_concatenation_s8(int32_t outer, int32_t num_inputs, const int8_t *const *inputs,
                         const int32_t *block_sizes, int8_t *output);

#endif
