/* Int16 SOFTMAX, variant "dsp" (Arm DSP extension: Cortex-M4F, M7, M55): softmax16_steps.h's
 * steps (which say why each equals TFLM's) with the row maximum and the normalisation two values
 * per word: SSUB16 + SEL keep the larger halfword of each lane, SMLABB / SMLATB multiply each
 * exp value by the reciprocal with the rounding term added, USAT #15 clamps to [0, 32767]. */
#include "microbuild/kernels/softmax16_steps.h"

#if defined(__ARM_FEATURE_DSP)

#include "microbuild/dsp_words.h"

/* Per lane, the larger of the two int16 halves of a and b. */
static inline uint32_t max16x2(uint32_t a, uint32_t b)
{
    uint32_t r;
    uint32_t t;
    __asm__("ssub16 %1, %2, %3\n\tsel %0, %2, %3" : "=r"(r), "=&r"(t) : "r"(a), "r"(b));
    return r;
}

static int32_t row_max(const int16_t *x, int32_t depth)
{
    int32_t c = 0;
    int32_t max = x[0];
    if (depth >= 2) {
        uint32_t m = mb_load32(x);
        for (c = 2; c + 1 < depth; c += 2) {
            m = max16x2(mb_load32(x + c), m);
        }
        const int32_t lo = (int16_t)(m & 0xffff);
        const int32_t hi = (int32_t)m >> 16;
        max = lo > hi ? lo : hi;
    }
    if (c < depth && x[c] > max) {
        max = x[c];
    }
    return max;
}

void mb_softmax_s16_dsp(const mb_softmax_s16_params *p, const int16_t *input, int16_t *output,
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
        int32_t c = 0;
        for (; c + 1 < depth; c += 2) {
            const int32_t e0 = mb_s16_exp(in[c] - max, s.lshift, s.multiplier, s.bias, s.right);
            const int32_t e1 =
                mb_s16_exp(in[c + 1] - max, s.lshift, s.multiplier, s.bias, s.right);
            out[c] = (int16_t)e0;
            out[c + 1] = (int16_t)e1;
            sum += e0 + e1;
        }
        if (c < depth) {
            const int32_t e = mb_s16_exp(in[c] - max, s.lshift, s.multiplier, s.bias, s.right);
            out[c] = (int16_t)e;
            sum += e;
        }

        int right_shift;
        const int32_t reciprocal = mb_s16_reciprocal(sum, &right_shift);
        const int32_t round = (int32_t)1 << (right_shift - 1);
        for (c = 0; c + 1 < depth; c += 2) {
            const uint32_t w = mb_load32(out + c);
            const int32_t lo = __usat(__smlabb((int32_t)w, reciprocal, round) >> right_shift, 15);
            const int32_t hi = __usat(__smlatb((int32_t)w, reciprocal, round) >> right_shift, 15);
            const uint32_t packed = (uint32_t)lo | ((uint32_t)hi << 16);
            memcpy(out + c, &packed, 4);
        }
        if (c < depth) {
            const int32_t v = (out[c] * reciprocal + round) >> right_shift;
            out[c] = (int16_t)(v > 32767 ? 32767 : v);
        }
    }
}

#endif
