/* Float32 PAD / PADV2, as TFLM's reference Pad on float: input values copied unchanged, the
 * border filled with pad_value (0.0f for PAD, the constant for PADV2). The shape description is
 * pad.h's (left-extended to five dimensions at compile time). */
#ifndef MICROBUILD_KERNELS_PAD_F32_H
#define MICROBUILD_KERNELS_PAD_F32_H

#include "microbuild/kernels/pad.h"

void mb_pad_f32(const mb_pad_s8_params *params, float pad_value, const float *input,
                float *output);

#endif
