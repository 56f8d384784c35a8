#include "microbuild/kernels/cumsum.h"

void mb_cumsum_f32(const mb_cumsum_shape *s, const float *input, float *output)
{
    /* Each line of the axis starts at its first element, or at its last when reversed. */
    const int32_t step = s->reverse ? -s->inner : s->inner;
    const int32_t first = s->reverse ? (s->depth - 1) * s->inner : 0;
    for (int32_t o = 0; o < s->outer; o++) {
        for (int32_t i = 0; i < s->inner; i++) {
            int32_t index = o * s->depth * s->inner + i + first;
            float accumulator = 0.0f;
            for (int32_t d = 0; d < s->depth; d++, index += step) {
                if (s->exclusive) {
                    output[index] = accumulator;
                    accumulator += input[index];
                } else {
                    accumulator += input[index];
                    output[index] = accumulator;
                }
            }
        }
    }
}
