/* Int8 element-wise function by table lookup.
 *
 * An int8 unary operator's output depends only on the input byte, so for LOGISTIC, TANH and
 * HARD_SWISH the compiler runs TFLM's own integer arithmetic for all 256 inputs at compile time
 * and the device only indexes the table: bit-exact by construction, and one load per element. */
#ifndef MICROBUILD_KERNELS_LUT_H
#define MICROBUILD_KERNELS_LUT_H

#include <stdint.h>

/* output[i] = table[input[i] + 128]; output may be input (in place). */
void mb_lut_s8(const int8_t table[256], const int8_t *input, int8_t *output, int32_t size);

#endif
