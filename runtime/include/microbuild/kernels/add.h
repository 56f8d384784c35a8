/* Int8 ADD with broadcasting, bit-exact with TFLM's reference_integer_ops::Add.
 *
 * Both inputs are brought to a common scale (twice the larger input scale) with 20 bits of
 * headroom (left_shift), summed in int32, and the sum is rescaled to the output. All multipliers
 * are Q31 with a right shift, computed at compile time. */
#ifndef MICROBUILD_KERNELS_ADD_H
#define MICROBUILD_KERNELS_ADD_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"

typedef struct {
    int32_t input1_offset;     /* minus input 1's zero point */
    int32_t input1_multiplier;
    int32_t input1_shift;      /* <= 0 */
    int32_t input2_offset;     /* minus input 2's zero point */
    int32_t input2_multiplier;
    int32_t input2_shift;      /* <= 0 */
    int32_t left_shift;        /* 20 for int8 */
    int32_t output_multiplier;
    int32_t output_shift;      /* <= 0 */
    int32_t output_offset;     /* output zero point */
    int32_t activation_min;
    int32_t activation_max;
} mb_add_s8_params;

void mb_add_s8(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
               const int8_t *input1, const int8_t *input2, int8_t *output);

#endif
