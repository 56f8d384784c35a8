/* Int16 SOFTMAX, variant "fast": portable C over softmax16_steps.h (which says why each step
 * equals TFLM's). */
#include "microbuild/kernels/softmax16_steps.h"

static int32_t row_max(const int16_t *x, int32_t depth)
{
    int32_t max = x[0];
    int32_t c = 1;
    for (; c + 1 < depth; c += 2) {
        const int32_t a = x[c];
        const int32_t b = x[c + 1];
        max = a > max ? a : max;
        max = b > max ? b : max;
    }
    if (c < depth && x[c] > max) {
        max = x[c];
    }
    return max;
}

void mb_softmax_s16_fast(const mb_softmax_s16_params *p, const int16_t *input, int16_t *output,
                         void *scratch)
{
    (void)scratch;
    const int32_t depth = p->depth;
    const mb_s16_exp_step s = mb_s16_exp_step_of(p);
    for (int32_t row = 0; row < p->rows; row++) {
        const int16_t *in = input + row * depth;
        int16_t *out = output + row * depth;
        const int32_t max = row_max(in, depth);

        int32_t sum = 0;
        for (int32_t c = 0; c < depth; c++) {
            const int32_t e = mb_s16_exp(in[c] - max, s.lshift, s.multiplier, s.bias, s.right);
            out[c] = (int16_t)e;
            sum += e;
        }

        int right_shift;
        const int32_t reciprocal = mb_s16_reciprocal(sum, &right_shift);
        const int32_t round = (int32_t)1 << (right_shift - 1);
        for (int32_t c = 0; c < depth; c++) {
            const int32_t v = (out[c] * reciprocal + round) >> right_shift;
            out[c] = (int16_t)(v > 32767 ? 32767 : v);
        }
    }
}
