#include "microbuild/kernels/requantize.h"

#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

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

/* The scale of an 8- or 16-bit input in fewer instructions than mb_requantize_fast32, the same
 * value. The compiler bounds the left shift (requantize_shift_reasons: (in - zp_in) << left fits
 * int32 with one bit to spare, so |x << left| < 2^30 for these inputs: 8-bit |x| <= 255 with
 * left <= 22, 16-bit |x| <= 65535 with left <= 14); then
 *   high = ((x << left) * M + 2^30) >> 31 = SMMULR(x << (left + 1), M)   (Armv7E-M, v8-M DSP)
 *                                         = VQRDMULH(x << left, M)        (Helium, 4 lanes)
 * and |high| <= |x << left| < 2^30, so the rounding right shift by r, half away from zero, is
 * (2 * high - [high < 0] + 2^r) >> (r + 1) in int32 (requantize_mve.h: VRSHL by -(r + 1) rounds
 * half up). fast_scale_fits says when that holds; other parameters take mb_requantize_fast32. */
typedef struct {
    int32_t input_zp, output_zp, multiplier, left, right;
} fast_scale;

static inline int fast_scale_fits(const mb_requantize_s8_params *params, int input_bits,
                                  fast_scale *f)
{
    f->input_zp = params->input_zero_point;
    f->output_zp = params->output_zero_point;
    f->multiplier = params->multiplier;
    f->left = params->shift > 0 ? params->shift : 0;
    f->right = params->shift > 0 ? 0 : -params->shift;
    return f->multiplier >= 0 && f->left <= 30 - input_bits && f->right <= 29;
}

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#include <arm_acle.h>
#define MB_REQUANTIZE_SMMULR 1

/* x * M * 2^shift rounded as mb_requantize_fast32: SMMULR, then the rounding shift as two adds
 * with shifted operands and one ASR (about 6 instructions instead of 12-15). */
static inline int32_t scale_fast(int32_t x, const fast_scale *f)
{
    int32_t high;
    __asm__("smmulr %0, %1, %2" : "=r"(high) : "r"((int32_t)((uint32_t)x << (f->left + 1))),
            "r"(f->multiplier));
    const int32_t t = (int32_t)(((uint32_t)high << 1) + (uint32_t)(high >> 31) +
                                ((uint32_t)1 << f->right));
    return t >> (f->right + 1);
}

/* v clamped to an 8- or 16-bit type's range [LO, HI]: one SSAT / USAT. */
#define MB_SATURATE_TO(LO, HI, v)                                                               \
    ((LO) == 0 ? (int32_t)__usat((v), 8) : (HI) == 127 ? __ssat((v), 8) : __ssat((v), 16))
#endif

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

/* 4 lanes of (x - zp_in) * M * 2^shift + zp_out clamped to [lo, hi] (OUT32: a saturating add
 * instead, which is the int32 clamp of the exact sum). */
static inline int32x4_t scale4(int32x4_t v, const fast_scale *f, const int out32, int32_t lo,
                               int32_t hi)
{
    const int32x4_t x = vshlq_r_s32(vsubq_n_s32(v, f->input_zp), f->left);
    const int32x4_t high = vqrdmulhq_n_s32(x, f->multiplier);
    const int32x4_t t = vaddq_s32(vaddq_s32(high, high), vshrq_n_s32(high, 31));
    const int32x4_t s = vrshlq_n_s32(t, -(f->right + 1));
    if (out32) {
        return vqaddq_n_s32(s, f->output_zp);
    }
    return vminq_s32(vmaxq_s32(vaddq_n_s32(s, f->output_zp), vdupq_n_s32(lo)), vdupq_n_s32(hi));
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

#define MB_REQUANTIZE_FAST_LOOP(TI, TO, LO, HI)                                                 \
    {                                                                                           \
        const int out32 = sizeof(TO) == 4;                                                      \
        int32_t i = 0;                                                                          \
        for (; i + 4 <= size; i += 4) {                                                         \
            MB_STORE4_##TO(output + i, scale4(MB_LOAD4_##TI(input + i), &f, out32, LO, HI));    \
        }                                                                                       \
        if (i < size) {                                                                         \
            const mve_pred16_t last = vctp32q((uint32_t)(size - i));                            \
            MB_STORE4P_##TO(output + i,                                                         \
                            scale4(MB_LOAD4Z_##TI(input + i, last), &f, out32, LO, HI), last);  \
        }                                                                                       \
        return;                                                                                 \
    }
#elif defined(MB_REQUANTIZE_SMMULR)
#define MB_REQUANTIZE_FAST_LOOP(TI, TO, LO, HI)                                                 \
    {                                                                                           \
        for (int32_t i = 0; i < size; i++) {                                                    \
            const int32_t s = scale_fast((int32_t)input[i] - f.input_zp, &f);                   \
            if (sizeof(TO) == 4) {                                                              \
                output[i] = (TO)__qadd(s, f.output_zp);                                         \
            } else {                                                                            \
                output[i] = (TO)MB_SATURATE_TO((LO), (HI), s + f.output_zp);                    \
            }                                                                                   \
        }                                                                                       \
        return;                                                                                 \
    }
#endif

/* out = clamp(zp_out + (in - zp_in) * M) to the output type's range [LO, HI]; the int32 result
 * of the multiply is TFLM's (MultiplyByQuantizedMultiplier), here by the fast forms above where
 * the core has them and the parameters fit, else by mb_requantize_fast32 (quant_fast.h: the same
 * value for the compiler's positive multipliers, in about half the instructions of the
 * reference's), then offset. The parameters are read once: stores through output could alias
 * *params, and reloading them every value cost more than the arithmetic. */
#if defined(MB_REQUANTIZE_FAST_LOOP)
#define MB_REQUANTIZE_FAST(TI, TO, LO, HI)                                                      \
    fast_scale f;                                                                               \
    if (fast_scale_fits(params, 8 * (int)sizeof(TI), &f))                                       \
    MB_REQUANTIZE_FAST_LOOP(TI, TO, LO, HI)
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
