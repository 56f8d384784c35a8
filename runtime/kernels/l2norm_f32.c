#include "microbuild/kernels/l2norm_f32.h"

#include <math.h>

void mb_l2_normalization_f32(const float *input, float *output, int32_t rows, int32_t depth)
{
    const float epsilon = 1e-6f;
    for (int32_t r = 0; r < rows; r++) {
        const float *x = input + r * depth;
        float *y = output + r * depth;
        float squared_norm = 0.0f;
        for (int32_t c = 0; c < depth; c++) {
            squared_norm = MB_F32_MULADD(squared_norm, x[c], x[c]);
        }
        float norm = sqrtf(squared_norm);
        norm = norm < epsilon ? epsilon : norm; /* std::max(norm, epsilon) */
        for (int32_t c = 0; c < depth; c++) {
            y[c] = x[c] / norm;
        }
    }
}
