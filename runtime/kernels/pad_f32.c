#include "microbuild/kernels/pad_f32.h"

/* The int8 kernel's walk on 4-byte elements: values are copied, never computed with. */
void mb_pad_f32(const mb_pad_s8_params *p, float pad_value, const float *input, float *output)
{
    mb_pad_elements(p, (int32_t)sizeof(float), &pad_value, input, output);
}
