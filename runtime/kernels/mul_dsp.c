/* MUL, Arm DSP variants "dsp" and "dsp_s16" (Cortex-M4/M7/M33/M55): the reference's arithmetic
 * (mul.c), several elements a loaded word.
 *
 * int8 ("dsp"): one word of each input holds 4 elements; SXTAB16 adds the input offset (packed in
 * both halves) to bytes 0 and 2, SXTAB16 with ROR #8 to bytes 1 and 3, and SMULBB/SMULTT multiply
 * the corrected halves: the reference's (x1 + offset1) * (x2 + offset2), each at most
 * 255 * 255 < 2^16 in magnitude. A broadcast operand (stride 0) is its byte repeated in a word.
 * The requantization is the reference's: the product shifted left by the output shift's
 * positive part, the rounding doubling high multiply ((x * m + 2^30) >> 31, here one SMMULR of
 * x * 2^(left + 1): exact while that fits int32, i.e. |x| * 2^(left + 1) < 2^31, which mul.py's
 * check for this variant guarantees by refusing left shifts above 14), then the rounding right
 * shift half away from zero, which cannot overflow (the high word is below 2^30).
 *
 * 16x8 ("dsp_s16"): a word holds 2 int16 elements; zero points are 0 (TFLM's int16 MUL), so
 * SMULBB/SMULTT give the products directly, at most 2^30 in magnitude, and the output shift is
 * never positive (mul.py refuses that). The doubled product may reach 2^31, so the high multiply
 * is SMLAL's 64-bit form rather than SMMULR; its result is at most 2^30, so the rounding shift
 * again fits int32. */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>

#include "microbuild/dsp_words.h"
#include "microbuild/kernels/mul.h"

/* The output's rounding right shift: 2^(right - 1) added, one less below zero, then shifted
 * (neg is -1 when right > 0, else 0 with half 0: the value unchanged). */
static inline int32_t mul_round(int32_t h, int32_t half, int32_t neg, int32_t right)
{
    return (h + half + ((h >> 31) & neg)) >> right;
}

static inline int32_t mul_clamp(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* SMULBB and SMULTT (GCC's arm_acle.h has no intrinsic; it recognises these forms). */
static inline int32_t mul_bottoms(int32_t a, int32_t b)
{
    return (int32_t)(int16_t)a * (int16_t)b;
}

static inline int32_t mul_tops(int32_t a, int32_t b)
{
    return (a >> 16) * (b >> 16);
}

static inline int32_t mul_odd_offset(int32_t offset2, uint32_t v)
{
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(offset2), "r"(v));
    return r;
}

static void mul_row_dsp(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                        int32_t b_step, int8_t *out, int32_t n)
{
    const mb_mul_s8_params *p = (const mb_mul_s8_params *)params;
    const int32_t lshift = (p->output_shift > 0 ? p->output_shift : 0) + 1;
    const int32_t right = p->output_shift > 0 ? 0 : -p->output_shift;
    const int32_t half = right > 0 ? (int32_t)1 << (right - 1) : 0;
    const int32_t neg = right > 0 ? -1 : 0;
    const int32_t m = p->output_multiplier;
    const int32_t zp = p->output_offset;
    const int32_t lo = p->activation_min;
    const int32_t hi = p->activation_max;
    const int32_t off1 = p->input1_offset;
    const int32_t off2 = p->input2_offset;
#define MUL_DSP_OUT(x)                                                                        \
    mul_clamp(mul_round(mb_smmulr((int32_t)((uint32_t)(x) << lshift), m), half, neg, right) + zp, \
              lo, hi)
    if ((a_step == 0 || a_step == 1) && (b_step == 0 || b_step == 1)) {
        const int32_t off1x2 = (int32_t)(((uint32_t)off1 & 0xFFFFu) | ((uint32_t)off1 << 16));
        const int32_t off2x2 = (int32_t)(((uint32_t)off2 & 0xFFFFu) | ((uint32_t)off2 << 16));
        /* A broadcast operand: its byte in all four lanes of a word, read once. */
        const uint32_t fixed1 = (uint32_t)(uint8_t)a[0] * 0x01010101u;
        const uint32_t fixed2 = (uint32_t)(uint8_t)b[0] * 0x01010101u;
        int32_t i = 0;
        for (; i + 4 <= n; i += 4) {
            const uint32_t wa = a_step ? mb_load32(a + i) : fixed1;
            const uint32_t wb = b_step ? mb_load32(b + i) : fixed2;
            const int32_t a02 = __sxtab16(off1x2, (int32_t)wa);
            const int32_t a13 = mul_odd_offset(off1x2, wa);
            const int32_t b02 = __sxtab16(off2x2, (int32_t)wb);
            const int32_t b13 = mul_odd_offset(off2x2, wb);
            out[i] = (int8_t)MUL_DSP_OUT(mul_bottoms(a02, b02));
            out[i + 1] = (int8_t)MUL_DSP_OUT(mul_bottoms(a13, b13));
            out[i + 2] = (int8_t)MUL_DSP_OUT(mul_tops(a02, b02));
            out[i + 3] = (int8_t)MUL_DSP_OUT(mul_tops(a13, b13));
        }
        for (; i < n; i++) {
            out[i] = (int8_t)MUL_DSP_OUT((a[i * a_step] + off1) * (b[i * b_step] + off2));
        }
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int8_t)MUL_DSP_OUT((a[i * a_step] + off1) * (b[i * b_step] + off2));
    }
#undef MUL_DSP_OUT
}

void mb_mul_s8_dsp(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, mul_row_dsp, params);
}

/* (x * m + 2^30) >> 31 for any int32 x (SMLAL on a 2^30 accumulator, then the high 33 bits). */
static inline int32_t mul_high_wide(int32_t x, int32_t m)
{
    return (int32_t)(((int64_t)x * m + ((int64_t)1 << 30)) >> 31);
}

static inline void mul_store_pair(int16_t *p, int32_t lo, int32_t hi)
{
    const uint32_t w = (uint32_t)(uint16_t)lo | ((uint32_t)hi << 16);
    __builtin_memcpy(p, &w, sizeof w);
}

static void mul_row_dsp_s16(const void *params, const int16_t *a, int32_t a_step,
                            const int16_t *b, int32_t b_step, int16_t *out, int32_t n)
{
    const mb_mul_s8_params *p = (const mb_mul_s8_params *)params;
    const int32_t right = -p->output_shift; /* >= 0: mul.py refuses a left shift for int16 */
    const int32_t half = right > 0 ? (int32_t)1 << (right - 1) : 0;
    const int32_t neg = right > 0 ? -1 : 0;
    const int32_t m = p->output_multiplier;
    const int32_t lo = p->activation_min;
    const int32_t hi = p->activation_max;
#define MUL_DSP_OUT16(x) mul_clamp(mul_round(mul_high_wide((x), m), half, neg, right), lo, hi)
    if ((a_step == 0 || a_step == 1) && (b_step == 0 || b_step == 1)) {
        /* A broadcast operand: its halfword in both halves of a word, read once. */
        const uint32_t fixed1 = (uint32_t)(uint16_t)a[0] * 0x00010001u;
        const uint32_t fixed2 = (uint32_t)(uint16_t)b[0] * 0x00010001u;
        int32_t i = 0;
        for (; i + 2 <= n; i += 2) {
            const int32_t wa = (int32_t)(a_step ? mb_load32(a + i) : fixed1);
            const int32_t wb = (int32_t)(b_step ? mb_load32(b + i) : fixed2);
            mul_store_pair(out + i, MUL_DSP_OUT16(mul_bottoms(wa, wb)),
                           MUL_DSP_OUT16(mul_tops(wa, wb)));
        }
        if (i < n) {
            out[i] = (int16_t)MUL_DSP_OUT16(a[i * a_step] * b[i * b_step]);
        }
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int16_t)MUL_DSP_OUT16(a[i * a_step] * b[i * b_step]);
    }
#undef MUL_DSP_OUT16
}

void mb_mul_s16_dsp(const mb_mul_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, mul_row_dsp_s16, params);
}

#else
typedef int mb_mul_dsp_unused;
#endif
