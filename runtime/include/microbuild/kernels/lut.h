/* 8-bit element-wise function by table lookup.
 *
 * An 8-bit unary operator's output depends only on the input byte, so for RELU, RELU6,
 * LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH, ABS, RSQRT and QUANTIZE between 8-bit types the
 * compiler runs TFLM's own integer arithmetic for all 256 inputs at compile time and the device
 * only indexes the table: bit-exact by construction, one lookup per element. uint8 tensors are
 * passed as int8_t pointers (the compiler orders their table for that). */
#ifndef MICROBUILD_KERNELS_LUT_H
#define MICROBUILD_KERNELS_LUT_H

#include <stdint.h>

/* output[i] = table[input[i] + 128] (table[byte ^ 0x80] for any byte); output may be
 * input (in place). */
void mb_lut_s8(const int8_t table[256], const int8_t *input, int8_t *output, int32_t size);

/* The table whose entry k is k: output byte = input byte ^ 0x80, i.e. a uint8 <-> int8
 * conversion with the same scale and zero points 128 apart (a camera frame into an int8 model).
 * Four values per XOR where words load at any address. output may be input. */
void mb_flip_sign_bits_s8(const int8_t *input, int8_t *output, int32_t size);

#endif
