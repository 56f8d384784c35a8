#include "microbuild/kernels/sigmoid16.h"
#include "microbuild/kernels/sigmoid16_mve.h"

/* The input in the table's fixed point: 2^9 (logistic) or 2^8 (tanh) steps per table entry. */
static __attribute__((unused)) int32_t rescale(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    return (x * multiplier + round) >> shift;
}

#if defined(__ARM_FEATURE_MVE)
/* Helium: 4 values a step (sigmoid16_mve.h, two VLDRH gathers of the table per step), whole
 * steps unpredicated, the last 1-3 values tail-predicated. The rescaling is VMUL and VRSHL by
 * -shift: (x * multiplier + 2^(shift - 1)) >> shift, |x * multiplier| < 2^30. */
static inline __attribute__((always_inline)) int32x4_t squash(int32x4_t x, int32_t multiplier,
                                                              int32_t shift, const int tanh)
{
    const int32x4_t scaled = vrshlq_n_s32(vmulq_n_s32(x, multiplier), -shift);
    return tanh ? mb_tanh_s16_lanes(scaled) : mb_logistic_s16_lanes(scaled, 0);
}

static inline __attribute__((always_inline)) void squash_all(int32_t multiplier, int32_t shift,
                                                             const int16_t *input,
                                                             int16_t *output, int32_t size,
                                                             const int tanh)
{
    for (; size >= 4; size -= 4, input += 4, output += 4) {
        vstrhq_s32(output, squash(vldrhq_s32(input), multiplier, shift, tanh));
    }
    if (size > 0) {
        const mve_pred16_t lanes = vctp32q((uint32_t)size);
        vstrhq_p_s32(output, squash(vldrhq_z_s32(input, lanes), multiplier, shift, tanh), lanes);
    }
}
#endif

void mb_logistic_s16(int32_t multiplier, int32_t shift, const int16_t *input, int16_t *output,
                     int32_t size)
{
#if defined(__ARM_FEATURE_MVE)
    squash_all(multiplier, shift, input, output, size, 0);
#else
    for (int32_t i = 0; i < size; i++) {
        output[i] = mb_logistic_s16_of(rescale(input[i], multiplier, shift));
    }
#endif
}

void mb_tanh_s16(int32_t multiplier, int32_t shift, const int16_t *input, int16_t *output,
                 int32_t size)
{
#if defined(__ARM_FEATURE_MVE)
    squash_all(multiplier, shift, input, output, size, 1);
#else
    for (int32_t i = 0; i < size; i++) {
        output[i] = mb_tanh_s16_of(rescale(input[i], multiplier, shift));
    }
#endif
}
