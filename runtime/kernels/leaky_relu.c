#include "microbuild/kernels/leaky_relu.h"

#include "microbuild/quant.h"
#include "microbuild/quant_small.h"

static int32_t leaky_relu_one(const mb_leaky_relu_params *p, int32_t in)
{
    const int32_t x = in - p->input_zero_point;
    const int32_t scaled = x >= 0
        ? mb_mul_by_quantized_multiplier(x, p->multiplier_identity, p->shift_identity)
        : mb_mul_by_quantized_multiplier(x, p->multiplier_alpha, p->shift_alpha);
    return p->output_zero_point + scaled;
}

void mb_leaky_relu_s8(const mb_leaky_relu_params *params, const int8_t *input, int8_t *output,
                      int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = (int8_t)mb_clamp_i32(leaky_relu_one(params, input[i]), -128, 127);
    }
}

/* int16: where both multipliers are positive and their shifts fit (mb_small_scale_of: the
 * converter's alpha in (0, 1) and scales do), quant_small.h's form of the same arithmetic, on 4
 * Helium lanes (both rescalings, then VPSEL by the sign) or SMMULR per value; else the
 * reference's. */
void mb_leaky_relu_s16(const mb_leaky_relu_params *params, const int16_t *input, int16_t *output,
                       int32_t size)
{
    const mb_leaky_relu_params p = *params; /* the output stores may alias *params */
    mb_small_scale identity, alpha;
    const int small = mb_small_scale_of(p.multiplier_identity, p.shift_identity, 16, &identity) &&
                      mb_small_scale_of(p.multiplier_alpha, p.shift_alpha, 16, &alpha);
    int32_t i = 0;
#if defined(__ARM_FEATURE_MVE)
    if (small) {
        const int32x4_t lo = vdupq_n_s32(-32768), hi = vdupq_n_s32(32767);
        for (; i + 4 <= size; i += 4) {
            const int32x4_t x = vsubq_n_s32(vldrhq_s32(input + i), p.input_zero_point);
            const int32x4_t scaled = vpselq_s32(mb_small_scale4(x, &identity),
                                                mb_small_scale4(x, &alpha), vcmpgeq_n_s32(x, 0));
            const int32x4_t y = vaddq_n_s32(scaled, p.output_zero_point);
            vstrhq_s32(output + i, vminq_s32(vmaxq_s32(y, lo), hi));
        }
    }
#elif defined(MB_SMALL_SCALE_DSP)
    if (small) {
        for (; i < size; i++) {
            const int32_t x = (int32_t)input[i] - p.input_zero_point;
            const int32_t scaled = x >= 0 ? mb_small_scale_apply(x, &identity)
                                          : mb_small_scale_apply(x, &alpha);
            output[i] = (int16_t)__ssat(scaled + p.output_zero_point, 16);
        }
    }
#else
    (void)small;
#endif
    for (; i < size; i++) { /* the rest: all of it, or Helium's last 1-3 values */
        output[i] = (int16_t)mb_clamp_i32(leaky_relu_one(&p, input[i]), -32768, 32767);
    }
}
