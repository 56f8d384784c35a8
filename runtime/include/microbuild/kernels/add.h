/* Int8 ADD with broadcasting, bit-exact with TFLM's reference_integer_ops::Add.
 *
 * Both inputs are brought to a common scale (twice the larger input scale) with 20 bits of
 * headroom (left_shift), summed in int32, and the sum is rescaled to the output. All multipliers
 * are Q31 with a right shift, computed at compile time. */
#ifndef MICROBUILD_KERNELS_ADD_H
#define MICROBUILD_KERNELS_ADD_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"
#include "microbuild/kernels/rescale_pair.h"
#include "microbuild/quant.h"

typedef struct {
    MB_RESCALE_PAIR_FIELDS     /* left_shift: 20 for int8, 15 for int16 */
    int32_t output_multiplier;
    int32_t output_shift;      /* <= 0 */
    int32_t output_offset;     /* output zero point */
    int32_t activation_min;
    int32_t activation_max;
} mb_add_s8_params;

/* One output element from one element of each input (the arithmetic of every ADD kernel, also
 * used by CONV_2D's fused residual epilogue). */
/* One element: the rescaled sum, offset and clamped to the activation range (int32, so the int8
 * and the int16 kernels share it: left_shift is 20 for int8, 15 for int16). */
static inline int32_t mb_add_one(const mb_add_s8_params *p, int32_t a, int32_t b)
{
    const int32_t scaled1 = MB_RESCALE_INPUT1(p, a);
    const int32_t scaled2 = MB_RESCALE_INPUT2(p, b);
    const int32_t result = mb_mul_by_quantized_multiplier(scaled1 + scaled2, p->output_multiplier,
                                                          p->output_shift) + p->output_offset;
    return mb_clamp_i32(result, p->activation_min, p->activation_max);
}

static inline int8_t mb_add_s8_one(const mb_add_s8_params *p, int32_t a, int32_t b)
{
    return (int8_t)mb_add_one(p, a, b);
}

void mb_add_s8(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
               const int8_t *input1, const int8_t *input2, int8_t *output);
/* 16x8 ADD (and SUB): the same arithmetic with left_shift 15 and an int16 clamp, as TFLM's
 * general-scale int16 path. */
void mb_add_s16(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                const int16_t *input1, const int16_t *input2, int16_t *output);

/* Variants (microbuild/compiler/ops/add.py): the same arguments plus the scratch pointer (unused:
 * NULL but for dsp_lut), the same bytes out, every broadcast the reference handles, in place like it.
 * fast: portable C, exact 32-bit rescaling steps (add_portable.c explains why they are exact).
 * dsp:  Arm DSP, one SMMULR per rescaling step (add_dsp.c).
 * dsp_lut: the dsp arithmetic with each input's step looked up in tables built in scratch
 *       (2 x 256 int32) once per call (add_dsp.c).
 * mve:  Helium, four int32 lanes per step (add_mve.c).
 * fast_s16, dsp_s16, mve_s16: the 16x8 forms of fast, dsp and mve. */
void mb_add_s8_fast(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
void mb_add_s8_dsp(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
void mb_add_s8_dsp_lut(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                       const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
void mb_add_s8_mve(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch);
void mb_add_s16_fast(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                     const int16_t *input1, const int16_t *input2, int16_t *output,
                     void *scratch);
void mb_add_s16_dsp(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch);
void mb_add_s16_mve(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch);

#endif
