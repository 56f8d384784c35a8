/* Int8 and 16x8 SUB with broadcasting, bit-exact with TFLM's reference_ops::Sub /
 * BroadcastQuantSubSlow: ADD's arithmetic (both inputs rescaled to twice the larger input scale
 * with left_shift bits of headroom) with the rescaled second input subtracted rather than added.
 * The parameters are ADD's (microbuild/kernels/add.h), computed as ADD's are. */
#ifndef MICROBUILD_KERNELS_SUB_H
#define MICROBUILD_KERNELS_SUB_H

#include <stdint.h>

#include "microbuild/kernels/add.h"
#include "microbuild/kernels/broadcast.h"

void mb_sub_s8(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
               const int8_t *input1, const int8_t *input2, int8_t *output);
/* left_shift 15 and the int16 range (TFLM's general int16 path; it has no power-of-two one). */
void mb_sub_s16(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                const int16_t *input1, const int16_t *input2, int16_t *output);

/* Variants (microbuild/compiler/ops/sub.py), with ADD's variant arguments (add.h): ADD's rows
 * subtracting the second rescaled input. fast, fast_s16: portable C (add_portable.c, which says
 * why this is exact); dsp, dsp_s16: one SMMULR per step (add_dsp.c); mve, mve_s16: Helium, four
 * int32 lanes (add_mve.c). */
void mb_sub_s8_fast(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
void mb_sub_s8_dsp(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);

void mb_sub_s8_mve(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
void mb_sub_s16_fast(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                     const int16_t *input1, const int16_t *input2, int16_t *output,
                     void *scratch);
void mb_sub_s16_dsp(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch);
void mb_sub_s16_mve(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch);

#endif
