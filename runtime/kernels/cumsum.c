#include "microbuild/kernels/cumsum.h"

#include "microbuild/quant.h"

/* value * 2^left_shift, rescaled by multiplier * 2^shift (shift <= 0), in TFLM's int32. */
static int32_t scaled(int32_t value, int32_t left_shift, int32_t multiplier, int32_t shift)
{
    const int32_t shifted = (int32_t)((uint32_t)value << left_shift);
    return mb_mul_by_quantized_multiplier(shifted, multiplier, shift);
}

void mb_cumsum_s8(const mb_cumsum_shape *s, const mb_cumsum_s8_params *p, const int8_t *input,
                  int8_t *output)
{
    /* Each line of the axis starts at its first element, or at its last when reversed. */
    const int32_t step = s->reverse ? -s->inner : s->inner;
    const int32_t first = s->reverse ? (s->depth - 1) * s->inner : 0;
    for (int32_t o = 0; o < s->outer; o++) {
        for (int32_t i = 0; i < s->inner; i++) {
            int32_t index = o * s->depth * s->inner + i + first;
            /* TFLM starts the sum at the rescaled input offset, not at 0. */
            int32_t accumulator = scaled(p->input_offset, p->left_shift, p->input_multiplier,
                                         p->input_shift);
            for (int32_t d = 0; d < s->depth; d++, index += step) {
                const int32_t y = scaled(p->input_offset + input[index], p->left_shift,
                                         p->input_multiplier, p->input_shift);
                int32_t sum;
                /* Added as unsigned: where TFLM's int32 sum overflows it wraps, so does this. */
                if (s->exclusive) {
                    sum = accumulator;
                    accumulator = (int32_t)((uint32_t)accumulator + (uint32_t)y);
                } else {
                    accumulator = (int32_t)((uint32_t)accumulator + (uint32_t)y);
                    sum = accumulator;
                }
                const int32_t out = mb_mul_by_quantized_multiplier(sum, p->output_multiplier,
                                                                   p->output_shift) +
                                    p->output_offset;
                output[index] = (int8_t)mb_clamp_i32(out, p->activation_min, p->activation_max);
            }
        }
    }
}
