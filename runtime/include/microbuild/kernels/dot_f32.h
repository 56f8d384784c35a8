/* Float32 dot products in TFLM's order, the inner loop of the float FULLY_CONNECTED and LSTM
 * kernels: each sum starts at 0.0f and adds x[d] * w[d] for d = 0, 1, ..., depth - 1, one
 * MB_F32_MULADD per term (f32.h: fused exactly where TFLM's build fuses), so each result has
 * the bits of TFLM's `for (d) total += x[d] * w[d];`.
 *
 * The speed comes from sharing work between sums, never from reordering one: four rows of
 * weights run side by side over the same x, and on FPU cores with Thumb-2 (f32.h's
 * MB_F32_FUSED) eight x values and eight weights of a row are fetched with one VLDM each
 * (dot_f32.c says how). */
#ifndef MICROBUILD_KERNELS_DOT_F32_H
#define MICROBUILD_KERNELS_DOT_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

/* sums[k] = dot(x, rows[k]) for k = 0..3, each row `depth` floats long. */
void mb_f32_dot4(const float *x, int32_t depth, const float *const rows[4], float sums[4]);

/* dot(x, w) over `depth` floats. */
float mb_f32_dot1(const float *x, int32_t depth, const float *w);

/* The same sums continued: sums[k] (s) on entry is the sum so far, the terms are added to it in
 * order of d. A sum over several runs of contiguous terms (CONV_2D's filter rows) is then the
 * one sum, bit for bit. */
void mb_f32_dot4_add(const float *x, int32_t depth, const float *const rows[4], float sums[4]);
float mb_f32_dot1_add(float s, const float *x, int32_t depth, const float *w);

#endif
