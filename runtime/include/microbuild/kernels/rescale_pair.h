/* Two quantized inputs brought to a common scale before they are combined, as TFLM's ADD, SUB,
 * SQUARED_DIFFERENCE and *WithScaling comparisons do: each input's zero point removed, the value
 * shifted left by left_shift bits of headroom and multiplied by its own Q31 multiplier (computed
 * at compile time: microbuild/compiler/ops/add.py, squared_difference.py, comparisons.py). */
#ifndef MICROBUILD_KERNELS_RESCALE_PAIR_H
#define MICROBUILD_KERNELS_RESCALE_PAIR_H

#include <stdint.h>

#include "microbuild/quant.h"

/* The first fields of each of those kernels' parameter structs. A field list rather than a nested
 * struct: the generated code names every field in a C99 designated initializer, and the kernels
 * read them as plain members. left_shift is 20 for int8 ADD/SUB (15 for int16), 7 for int8
 * SQUARED_DIFFERENCE (0 for int16), 8 for the comparisons. */
#define MB_RESCALE_PAIR_FIELDS                                                                   \
    int32_t input1_offset;     /* minus input 1's zero point */                                  \
    int32_t input1_multiplier;                                                                   \
    int32_t input1_shift;      /* <= 0 */                                                        \
    int32_t input2_offset;     /* minus input 2's zero point */                                  \
    int32_t input2_multiplier;                                                                   \
    int32_t input2_shift;      /* <= 0 */                                                        \
    int32_t left_shift;

/* One input value at the common scale. */
static inline int32_t mb_rescale_input(int32_t value, int32_t offset, int32_t multiplier,
                                       int32_t shift, int32_t left_shift)
{
    return mb_mul_by_quantized_multiplier((offset + value) * ((int32_t)1 << left_shift),
                                          multiplier, shift);
}

/* Input 1's and input 2's value at the common scale, for any params struct ``p`` that starts with
 * MB_RESCALE_PAIR_FIELDS. */
#define MB_RESCALE_INPUT1(p, value)                                                              \
    mb_rescale_input((value), (p)->input1_offset, (p)->input1_multiplier, (p)->input1_shift,    \
                     (p)->left_shift)
#define MB_RESCALE_INPUT2(p, value)                                                              \
    mb_rescale_input((value), (p)->input2_offset, (p)->input2_multiplier, (p)->input2_shift,    \
                     (p)->left_shift)

#endif
