#include "microbuild/kernels/requantize.h"

#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"
#include "microbuild/quant_small.h"

void mb_requantize_s8(const mb_requantize_s8_params *params, const int8_t *input, int8_t *output,
                      int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        const int32_t x = (int32_t)input[i] - params->input_zero_point;
        const int32_t result = mb_mul_by_quantized_multiplier(x, params->multiplier, params->shift) +
                               params->output_zero_point;
        output[i] = (int8_t)mb_clamp_i32(result, params->activation_min, params->activation_max);
    }
}

/* TFLM's QuantizeMultiplier(1.0): (x * 2) * 2^30 / 2^31 rounds to x exactly for any input of
 * these types (|x| < 2^17), so a scale of 1 is an offset. */
#define MB_REQUANTIZE_ONE_MULTIPLIER ((int32_t)1 << 30)
#define MB_REQUANTIZE_ONE_SHIFT 1

#if defined(__ARM_FEATURE_MVE)
/* 4 lanes of (x - zp_in) * M * 2^shift + zp_out clamped to [lo, hi] (OUT32: a saturating add
 * instead, which is the int32 clamp of the exact sum). */
static inline int32x4_t scale4(int32x4_t v, int32_t input_zp, const mb_small_scale *s,
                               int32_t output_zp, const int out32, int32_t lo, int32_t hi)
{
    const int32x4_t scaled = mb_small_scale4(vsubq_n_s32(v, input_zp), s);
    if (out32) {
        return vqaddq_n_s32(scaled, output_zp);
    }
    return vminq_s32(vmaxq_s32(vaddq_n_s32(scaled, output_zp), vdupq_n_s32(lo)),
                     vdupq_n_s32(hi));
}

/* Helium: 4 values per pass, the last 1-3 tail-predicated once after the loop (a predicate
 * inside the loop costs a VPR rebuild every pass). */
#define MB_LOAD4_int8_t(p) vldrbq_s32(p)
#define MB_LOAD4_uint8_t(p) vreinterpretq_s32_u32(vldrbq_u32(p))
#define MB_LOAD4_int16_t(p) vldrhq_s32(p)
#define MB_LOAD4Z_int8_t(p, m) vldrbq_z_s32((p), (m))
#define MB_LOAD4Z_uint8_t(p, m) vreinterpretq_s32_u32(vldrbq_z_u32((p), (m)))
#define MB_LOAD4Z_int16_t(p, m) vldrhq_z_s32((p), (m))
#define MB_STORE4_int8_t(p, v) vstrbq_s32((p), (v))
#define MB_STORE4_uint8_t(p, v) vstrbq_u32((p), vreinterpretq_u32_s32(v))
#define MB_STORE4_int16_t(p, v) vstrhq_s32((p), (v))
#define MB_STORE4_int32_t(p, v) vstrwq_s32((p), (v))
#define MB_STORE4P_int8_t(p, v, m) vstrbq_p_s32((p), (v), (m))
#define MB_STORE4P_uint8_t(p, v, m) vstrbq_p_u32((p), vreinterpretq_u32_s32(v), (m))
#define MB_STORE4P_int16_t(p, v, m) vstrhq_p_s32((p), (v), (m))
#define MB_STORE4P_int32_t(p, v, m) vstrwq_p_s32((p), (v), (m))

#define MB_REQUANTIZE_SMALL_LOOP(TI, TO, LO, HI)                                                \
    {                                                                                           \
        const int out32 = sizeof(TO) == 4;                                                      \
        int32_t i = 0;                                                                          \
        for (; i + 4 <= size; i += 4) {                                                         \
            MB_STORE4_##TO(output + i, scale4(MB_LOAD4_##TI(input + i), input_zp, &small,       \
                                              output_zp, out32, LO, HI));                       \
        }                                                                                       \
        if (i < size) {                                                                         \
            const mve_pred16_t last = vctp32q((uint32_t)(size - i));                            \
            MB_STORE4P_##TO(output + i,                                                         \
                            scale4(MB_LOAD4Z_##TI(input + i, last), input_zp, &small,           \
                                   output_zp, out32, LO, HI),                                   \
                            last);                                                              \
        }                                                                                       \
        return;                                                                                 \
    }
#elif defined(MB_SMALL_SCALE_DSP)
#define MB_REQUANTIZE_SMALL_LOOP(TI, TO, LO, HI)                                                \
    {                                                                                           \
        for (int32_t i = 0; i < size; i++) {                                                    \
            const int32_t s = mb_small_scale_apply((int32_t)input[i] - input_zp, &small);       \
            if (sizeof(TO) == 4) {                                                              \
                output[i] = (TO)__qadd(s, output_zp);                                           \
            } else {                                                                            \
                output[i] = (TO)MB_SATURATE_TO((LO), (HI), s + output_zp);                      \
            }                                                                                   \
        }                                                                                       \
        return;                                                                                 \
    }
#endif

/* out = clamp(zp_out + (in - zp_in) * M) to the output type's range [LO, HI]; the int32 result
 * of the multiply is TFLM's (MultiplyByQuantizedMultiplier), here by quant_small.h's SMMULR or
 * Helium form where the core has one and the parameters fit (the compiler's shift bound makes
 * them fit), else by mb_requantize_fast32 (quant_fast.h: the same value for the compiler's
 * positive multipliers, in about half the instructions of the reference's), then offset. The
 * parameters are read once: stores through output could alias *params, and reloading them
 * every value cost more than the arithmetic. */
#if defined(MB_REQUANTIZE_SMALL_LOOP)
#define MB_REQUANTIZE_FAST(TI, TO, LO, HI)                                                      \
    mb_small_scale small;                                                                       \
    if (mb_small_scale_of(multiplier, shift, 8 * (int)sizeof(TI), &small))                      \
    MB_REQUANTIZE_SMALL_LOOP(TI, TO, LO, HI)
#else
#define MB_REQUANTIZE_FAST(TI, TO, LO, HI)
#endif

#define MB_REQUANTIZE(NAME, TI, TO, LO, HI)                                                      \
    void NAME(const mb_requantize_s8_params *params, const TI *input, TO *output, int32_t size)  \
    {                                                                                           \
        const int32_t input_zp = params->input_zero_point, output_zp = params->output_zero_point; \
        const int32_t multiplier = params->multiplier, shift = params->shift;                   \
        if (multiplier == MB_REQUANTIZE_ONE_MULTIPLIER && shift == MB_REQUANTIZE_ONE_SHIFT) {   \
            /* A scale of exactly 1 (a uint8 <-> int8 camera input): the multiply is x. */      \
            const int32_t offset = output_zp - input_zp;                                        \
            for (int32_t i = 0; i < size; i++) {                                                \
                const int64_t result = (int64_t)input[i] + offset;                              \
                output[i] = (TO)(result < (LO) ? (LO) : (result > (HI) ? (HI) : result));        \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        MB_REQUANTIZE_FAST(TI, TO, LO, HI)                                                      \
        for (int32_t i = 0; i < size; i++) {                                                    \
            const int32_t x = (int32_t)input[i] - input_zp;                                     \
            const int64_t result =                                                              \
                (int64_t)mb_requantize_fast32(x, multiplier, shift) + output_zp;                \
            output[i] = (TO)(result < (LO) ? (LO) : (result > (HI) ? (HI) : result));            \
        }                                                                                       \
    }

MB_REQUANTIZE(mb_requantize_s16_s8, int16_t, int8_t, -128, 127)
MB_REQUANTIZE(mb_requantize_s8_s16, int8_t, int16_t, -32768, 32767)
MB_REQUANTIZE(mb_requantize_s16_s16, int16_t, int16_t, -32768, 32767)
MB_REQUANTIZE(mb_requantize_s8_s32, int8_t, int32_t, INT32_MIN, INT32_MAX)
MB_REQUANTIZE(mb_requantize_s16_s32, int16_t, int32_t, INT32_MIN, INT32_MAX)
MB_REQUANTIZE(mb_requantize_u8_s8, uint8_t, int8_t, -128, 127)
MB_REQUANTIZE(mb_requantize_s8_u8, int8_t, uint8_t, 0, 255)

/* int32 inputs (an int32 -> int16 requantization of an accumulator, as TFLM's own int16 test
 * `quantize0` has): (in - zp_in) and the sum with zp_out are int32 arithmetic in TFLM that may
 * wrap on a full-range input; they wrap here too (in unsigned arithmetic, which C defines), so the
 * result is the one TFLM's build computes rather than undefined behaviour. The multiply is
 * mb_requantize_fast32 (the reference's value for the compiler's positive multipliers, whatever
 * the int32 x: it shifts x left in 32 bits as the reference does), the parameters read once. */
#define MB_REQUANTIZE_S32(NAME, TO, LO, HI)                                                      \
    void NAME(const mb_requantize_s8_params *params, const int32_t *input, TO *output,          \
              int32_t size)                                                                     \
    {                                                                                           \
        const uint32_t input_zp = (uint32_t)params->input_zero_point;                          \
        const uint32_t output_zp = (uint32_t)params->output_zero_point;                        \
        const int32_t multiplier = params->multiplier, shift = params->shift;                   \
        for (int32_t i = 0; i < size; i++) {                                                    \
            const int32_t x = (int32_t)((uint32_t)input[i] - input_zp);                         \
            const int32_t scaled = mb_requantize_fast32(x, multiplier, shift);                  \
            const int32_t result = (int32_t)((uint32_t)scaled + output_zp);                     \
            output[i] = (TO)mb_clamp_i32(result, (LO), (HI));                                   \
        }                                                                                       \
    }

MB_REQUANTIZE_S32(mb_requantize_s32_s8, int8_t, -128, 127)
MB_REQUANTIZE_S32(mb_requantize_s32_s16, int16_t, -32768, 32767)
