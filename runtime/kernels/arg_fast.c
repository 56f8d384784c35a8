/* ARG_MAX / ARG_MIN of int8 values (int32 indices) along one axis, the walk fixed at compile time:
 * the input seen as [outer][size][inner] (inner = the product of the dimensions after the axis,
 * the axis' stride). The first of equal extremes wins, as in TFLM (strict comparisons).
 * ARG_MIN runs the ARG_MAX loop on ~v (= -1 - v): it reverses the order of int8 values and
 * keeps ties tied, so the first smallest value is the first largest ~v. */
#include "microbuild/kernels/reduce.h"

/* inner == 1: every output is one contiguous row of size values. */
static void arg_rows(const mb_arg_walk_params *p, const int8_t *input, int32_t *output,
                     int32_t flip)
{
    const int32_t size = p->size;
    for (int32_t o = 0; o < p->outer; o++) {
        const int8_t *x = input + o * size;
        int32_t best = x[0] ^ flip;
        int32_t best_index = 0;
        int32_t i = 1;
        for (; i + 1 < size; i += 2) {
            const int32_t a = x[i] ^ flip;
            const int32_t b = x[i + 1] ^ flip;
            if (a > best) {
                best = a;
                best_index = i;
            }
            if (b > best) {
                best = b;
                best_index = i + 1;
            }
        }
        if (i < size && (x[i] ^ flip) > best) {
            best_index = i;
        }
        output[o] = best_index;
    }
}

/* inner > 1: each output walks its column with the axis' stride. */
static void arg_columns(const mb_arg_walk_params *p, const int8_t *input, int32_t *output,
                        int32_t flip)
{
    const int32_t size = p->size;
    const int32_t inner = p->inner;
    for (int32_t o = 0; o < p->outer; o++) {
        const int8_t *plane = input + o * size * inner;
        for (int32_t j = 0; j < inner; j++) {
            const int8_t *x = plane + j;
            int32_t best = x[0] ^ flip;
            int32_t best_index = 0;
            for (int32_t i = 1; i < size; i++) {
                x += inner;
                const int32_t v = *x ^ flip;
                if (v > best) {
                    best = v;
                    best_index = i;
                }
            }
            *output++ = best_index;
        }
    }
}

void mb_arg_max_s8_fast(const mb_arg_walk_params *params, const int8_t *input,
                        int32_t *output)
{
    if (params->inner == 1) {
        arg_rows(params, input, output, 0);
    } else {
        arg_columns(params, input, output, 0);
    }
}

void mb_arg_min_s8_fast(const mb_arg_walk_params *params, const int8_t *input,
                        int32_t *output)
{
    if (params->inner == 1) {
        arg_rows(params, input, output, -1);
    } else {
        arg_columns(params, input, output, -1);
    }
}
