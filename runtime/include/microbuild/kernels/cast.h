/* CAST between integer types (int8, uint8, int16, uint16, int32, uint32), bit-exact with TFLM's
 * cast kernel, a C++ static_cast per element: a narrower or differently signed type keeps the
 * value modulo 2^bits (two's complement). One function per type pair, mb_cast_<from>_to_<to>
 * with the types named s8, u8, s16, u16, s32, u32 (the compiler picks it; unused ones are dropped
 * at link time); between two types of one width the bits are the same and
 * mb_cast_same_width copies them. */
#ifndef MICROBUILD_KERNELS_CAST_H
#define MICROBUILD_KERNELS_CAST_H

#include <stdint.h>

/* Written out, not macro-generated: the table executor reads these prototypes
 * (microbuild/blob/kernel_set.py). */
void mb_cast_s8_to_s8(const void *input, void *output, int32_t size);
void mb_cast_s8_to_u8(const void *input, void *output, int32_t size);
void mb_cast_s8_to_s16(const void *input, void *output, int32_t size);
void mb_cast_s8_to_u16(const void *input, void *output, int32_t size);
void mb_cast_s8_to_s32(const void *input, void *output, int32_t size);
void mb_cast_s8_to_u32(const void *input, void *output, int32_t size);

void mb_cast_u8_to_s8(const void *input, void *output, int32_t size);
void mb_cast_u8_to_u8(const void *input, void *output, int32_t size);
void mb_cast_u8_to_s16(const void *input, void *output, int32_t size);
void mb_cast_u8_to_u16(const void *input, void *output, int32_t size);
void mb_cast_u8_to_s32(const void *input, void *output, int32_t size);
void mb_cast_u8_to_u32(const void *input, void *output, int32_t size);

void mb_cast_s16_to_s8(const void *input, void *output, int32_t size);
void mb_cast_s16_to_u8(const void *input, void *output, int32_t size);
void mb_cast_s16_to_s16(const void *input, void *output, int32_t size);
void mb_cast_s16_to_u16(const void *input, void *output, int32_t size);
void mb_cast_s16_to_s32(const void *input, void *output, int32_t size);
void mb_cast_s16_to_u32(const void *input, void *output, int32_t size);

void mb_cast_u16_to_s8(const void *input, void *output, int32_t size);
void mb_cast_u16_to_u8(const void *input, void *output, int32_t size);
void mb_cast_u16_to_s16(const void *input, void *output, int32_t size);
void mb_cast_u16_to_u16(const void *input, void *output, int32_t size);
void mb_cast_u16_to_s32(const void *input, void *output, int32_t size);
void mb_cast_u16_to_u32(const void *input, void *output, int32_t size);

void mb_cast_s32_to_s8(const void *input, void *output, int32_t size);
void mb_cast_s32_to_u8(const void *input, void *output, int32_t size);
void mb_cast_s32_to_s16(const void *input, void *output, int32_t size);
void mb_cast_s32_to_u16(const void *input, void *output, int32_t size);
void mb_cast_s32_to_s32(const void *input, void *output, int32_t size);
void mb_cast_s32_to_u32(const void *input, void *output, int32_t size);

void mb_cast_u32_to_s8(const void *input, void *output, int32_t size);
void mb_cast_u32_to_u8(const void *input, void *output, int32_t size);
void mb_cast_u32_to_s16(const void *input, void *output, int32_t size);
void mb_cast_u32_to_u16(const void *input, void *output, int32_t size);
void mb_cast_u32_to_s32(const void *input, void *output, int32_t size);
void mb_cast_u32_to_u32(const void *input, void *output, int32_t size);

/* `bytes` bytes from input to output (nothing when they are the same buffer). */
void mb_cast_same_width(const void *input, void *output, int32_t bytes);

#endif
