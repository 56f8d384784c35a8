/* A value replaces the best so far only when strictly greater (smaller), so the first of equal
 * values wins, as in TFLM's ArgMinMax; a NaN never replaces the best, nor is replaced when it
 * comes first (every comparison with it is false). */
#include "microbuild/kernels/arg_f32.h"

static int32_t column_max(const float *x, int32_t size, int32_t stride)
{
    float best = x[0];
    int32_t best_index = 0;
    for (int32_t i = 1; i < size; i++) {
        x += stride;
        if (*x > best) {
            best = *x;
            best_index = i;
        }
    }
    return best_index;
}

static int32_t column_min(const float *x, int32_t size, int32_t stride)
{
    float best = x[0];
    int32_t best_index = 0;
    for (int32_t i = 1; i < size; i++) {
        x += stride;
        if (*x < best) {
            best = *x;
            best_index = i;
        }
    }
    return best_index;
}

void mb_arg_max_f32(const mb_arg_walk_params *params, const float *input, int32_t *output)
{
    const int32_t size = params->size;
    const int32_t inner = params->inner;
    for (int32_t o = 0; o < params->outer; o++) {
        for (int32_t j = 0; j < inner; j++) {
            *output++ = column_max(input + j, size, inner);
        }
        input += size * inner;
    }
}

void mb_arg_min_f32(const mb_arg_walk_params *params, const float *input, int32_t *output)
{
    const int32_t size = params->size;
    const int32_t inner = params->inner;
    for (int32_t o = 0; o < params->outer; o++) {
        for (int32_t j = 0; j < inner; j++) {
            *output++ = column_min(input + j, size, inner);
        }
        input += size * inner;
    }
}
