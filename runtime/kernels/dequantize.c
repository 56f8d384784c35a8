#include "microbuild/kernels/dequantize.h"

/* output = scale * (float)(q - zero_point): the int32 difference converts to float exactly (it is
 * under 2^24), then one rounded multiply, as TFLM's Dequantize. On Helium with floating point
 * (Cortex-M55) 4 values per pass: VCVT of the 4 differences (exact) and one VMUL (the same
 * rounding); the last 1-3 tail-predicated once after the loop. Helium's float arithmetic
 * flushes subnormal results to zero and gives the default NaN: with a scale in [2^-100, 2^100]
 * every nonzero product is a normal float, as the scalar one is; any other scale (none a
 * converter writes) takes the scalar loop. */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>

static inline float32x4_t dequantize4(int32x4_t q, float scale, int32_t zero_point)
{
    return vmulq_n_f32(vcvtq_f32_s32(vsubq_n_s32(q, zero_point)), scale);
}

#define MB_DEQUANTIZE_BODY(LOAD, LOADZ)                                                         \
    int32_t i = 0;                                                                              \
    if (scale >= 0x1p-100f && scale <= 0x1p100f) {                                              \
        for (; i + 4 <= size; i += 4) {                                                         \
            vstrwq_f32(output + i, dequantize4(LOAD(input + i), scale, zero_point));            \
        }                                                                                       \
        if (i < size) {                                                                         \
            const mve_pred16_t last = vctp32q((uint32_t)(size - i));                            \
            vstrwq_p_f32(output + i, dequantize4(LOADZ(input + i, last), scale, zero_point),    \
                         last);                                                                 \
        }                                                                                       \
        return;                                                                                 \
    }                                                                                           \
    for (; i < size; i++) {                                                                     \
        output[i] = scale * (float)((int32_t)input[i] - zero_point);                            \
    }

#define MB_LOAD_U8(p) vreinterpretq_s32_u32(vldrbq_u32(p))
#define MB_LOADZ_U8(p, m) vreinterpretq_s32_u32(vldrbq_z_u32((p), (m)))
#else
#define MB_DEQUANTIZE_BODY(LOAD, LOADZ)                                                         \
    for (int32_t i = 0; i < size; i++) {                                                        \
        output[i] = scale * (float)((int32_t)input[i] - zero_point);                            \
    }
#endif

void mb_dequantize_s8_f32(float scale, int32_t zero_point, const int8_t *input, float *output,
                          int32_t size)
{
    MB_DEQUANTIZE_BODY(vldrbq_s32, vldrbq_z_s32)
}

void mb_dequantize_s16_f32(float scale, int32_t zero_point, const int16_t *input, float *output,
                           int32_t size)
{
    MB_DEQUANTIZE_BODY(vldrhq_s32, vldrhq_z_s32)
}

void mb_dequantize_u8_f32(float scale, int32_t zero_point, const uint8_t *input, float *output,
                          int32_t size)
{
    MB_DEQUANTIZE_BODY(MB_LOAD_U8, MB_LOADZ_U8)
}
