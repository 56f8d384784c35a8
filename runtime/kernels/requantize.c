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

/* out = clamp(zp_out + (in - zp_in) * M) to the output type's range [LO, HI]; the int32 result
 * of the multiply is TFLM's (MultiplyByQuantizedMultiplier), here by mb_requantize_fast32
 * (quant_fast.h: the same value for the compiler's positive multipliers, in about half the
 * instructions), then offset. The parameters are read once: stores through output could alias
 * *params, and reloading them every value cost more than the arithmetic. */
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
