/* ARG_MAX / ARG_MIN of int8 values, variant "dsp" (Arm DSP extension): along a strided axis
 * (inner >= 4) four neighbouring columns at a time, one word per step along the axis. SSUB8 of
 * best - v sets a lane's GE flag where best >= v, so SEL keeps that lane's best value and its index
 * (one byte: the axis has at most 256 values, the compiler checks) and takes the new value and
 * step number only where v is strictly larger: the first extreme wins, as in TFLM. ARG_MIN works
 * on ~v (each byte -1 - v). Rows along the innermost axis (inner < 4) run arg_fast.c's kernel. */
#include "microbuild/kernels/reduce.h"

#if defined(__ARM_FEATURE_DSP)

#include "microbuild/dsp_words.h"

/* One column of the inner < 4 tail: the scalar walk. */
static int32_t arg_column(const int8_t *x, int32_t size, int32_t inner, int32_t flip)
{
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
    return best_index;
}

static void arg_columns4(const mb_arg_walk_params *p, const int8_t *input, int32_t *output,
                         uint32_t flip)
{
    const int32_t size = p->size;
    const int32_t inner = p->inner;
    for (int32_t o = 0; o < p->outer; o++) {
        const int8_t *plane = input + o * size * inner;
        int32_t j = 0;
        for (; j + 4 <= inner; j += 4) {
            const int8_t *x = plane + j;
            uint32_t best = mb_load32(x) ^ flip;
            uint32_t index = 0;
            uint32_t step = 0;
            for (int32_t i = 1; i < size; i++) {
                x += inner;
                step += 0x01010101u;
                const uint32_t v = mb_load32(x) ^ flip;
                uint32_t t;
                __asm__("ssub8 %2, %0, %3\n\tsel %0, %0, %3\n\tsel %1, %1, %4"
                        : "+r"(best), "+r"(index), "=&r"(t)
                        : "r"(v), "r"(step));
            }
            output[j] = (int32_t)(index & 0xff);
            output[j + 1] = (int32_t)((index >> 8) & 0xff);
            output[j + 2] = (int32_t)((index >> 16) & 0xff);
            output[j + 3] = (int32_t)(index >> 24);
        }
        for (; j < inner; j++) {
            output[j] = arg_column(plane + j, size, inner, (int32_t)(int8_t)(flip & 0xff));
        }
        output += inner;
    }
}

void mb_arg_max_s8_dsp(const mb_arg_walk_params *params, const int8_t *input,
                       int32_t *output)
{
    if (params->inner < 4) {
        mb_arg_max_s8_fast(params, input, output);
    } else {
        arg_columns4(params, input, output, 0);
    }
}

void mb_arg_min_s8_dsp(const mb_arg_walk_params *params, const int8_t *input,
                       int32_t *output)
{
    if (params->inner < 4) {
        mb_arg_min_s8_fast(params, input, output);
    } else {
        arg_columns4(params, input, output, 0xffffffffu);
    }
}

#endif
