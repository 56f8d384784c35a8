/* CAST between integer types (int8, uint8, int16, uint16, int32, uint32), bit-exact with TFLM's
 * cast kernel, a C++ static_cast per element: a narrower or differently signed type keeps the
 * value modulo 2^bits (two's complement). Types are named by their size in bytes, negative when
 * signed (-1 int8, 1 uint8, -2 int16, 2 uint16, -4 int32, 4 uint32). */
#ifndef MICROBUILD_KERNELS_CAST_H
#define MICROBUILD_KERNELS_CAST_H

#include <stdint.h>

void mb_cast_int(const void *input, int32_t input_type, void *output, int32_t output_type,
                 int32_t size);

#endif
