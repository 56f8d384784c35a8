/* CAST to and from float32, as TFLM's cast kernel (a C++ static_cast per element): an integer
 * becomes the nearest float (round to nearest even, exact up to 2^24); a float becomes an
 * integer by truncation toward zero. Integer types are named as in cast.h (size in bytes,
 * negative when signed). A float outside the integer type's range is undefined in C and C++
 * alike, in TFLM too; the compiler warns about such a cast only for constants. */
#ifndef MICROBUILD_KERNELS_CAST_F32_H
#define MICROBUILD_KERNELS_CAST_F32_H

#include <stdint.h>

void mb_cast_int_to_f32(const void *input, int32_t input_type, float *output, int32_t size);
void mb_cast_f32_to_int(const float *input, void *output, int32_t output_type, int32_t size);

#endif
