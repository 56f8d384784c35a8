/* ADD, portable C variant "fast": the reference's arithmetic with cheaper exact fixed-point
 * steps, and a broadcast operand (stride 0: a scalar or a per-channel vector) rescaled once per
 * run instead of once per element.
 *
 * Each step is TFLM's MultiplyByQuantizedMultiplierSmallerThanOneExp: a rounding doubling high
 * multiply, then a rounding right shift (half away from zero). Why the cheaper form is exact for
 * ADD (the compiler's parameters, microbuild/compiler/ops/add.py):
 * - multipliers are positive Q31 (never INT32_MIN: no saturation), and the value multiplied, a,
 *   is small: an input step multiplies (x + offset) * 2^20 with |x + offset| <= 255 (< 2^28), the
 *   output step the sum of two rescaled inputs, each at most 255 * 2^19 (an input multiplier is
 *   at most 0.5) so |sum| < 2^28. Hence 2a fits in int32 and
 *     (a * m + 2^30) >> 31 == (2a * m + 2^31) >> 32      (floor both; see quant_fast.h for why
 *   floor equals the reference's truncating form), the high word of one 32x32 multiply
 *   (SMMULR on Arm DSP);
 * - the result h of that step is below 2^28 in magnitude, so the rounding shift
 *     (h + 2^(r-1) - (h < 0)) >> r       (r > 0; h itself when r == 0)
 *   fits int32 (quant_fast.h's form, in 32 bits).
 * The left shift must stay below 23 for these bounds; TFLM and microbuild use 20 for int8.
 *
 * SUB's variant "fast" (mb_sub_s8_fast) is the same row with the second rescaled input
 * subtracted. TFLM's SUB rescales both inputs exactly as ADD does and subtracts the results, so
 * subtracting our (identical) rescaled values is exact; the difference has the sum's bound
 * (< 2^28). What would not be exact is ADD with the second multiplier negated: the rounding
 * doubling multiply rounds ties up (toward +inf), so rescale(-x) is not -rescale(x) at ties. */
#include "microbuild/kernels/add.h"
#include "microbuild/kernels/sub.h"

typedef struct {
    int32_t offset2x;   /* input offset * 2^(left_shift + 1) */
    int32_t scale2x;    /* 2^(left_shift + 1) */
    int32_t multiplier;
    int32_t right;      /* right shift, >= 0 */
    int32_t half;       /* 2^(right - 1), 0 when right == 0 */
    int32_t negative;   /* -1 when right > 0 (subtract one from negative values), else 0 */
} add_step;

static add_step make_step(int32_t offset, int32_t left_shift, int32_t multiplier, int32_t shift)
{
    add_step s;
    const int32_t right = shift > 0 ? 0 : -shift;
    s.scale2x = (int32_t)1 << (left_shift + 1);
    s.offset2x = offset * s.scale2x;
    s.multiplier = multiplier;
    s.right = right;
    s.half = right > 0 ? (int32_t)1 << (right - 1) : 0;
    s.negative = right > 0 ? -1 : 0;
    return s;
}

/* (a * m + 2^30) >> 31 from 2a, then the rounding right shift. */
static inline int32_t add_rescale(const add_step *s, int32_t a2)
{
    const int32_t h = (int32_t)(((int64_t)a2 * s->multiplier + ((int64_t)1 << 31)) >> 32);
    return (h + s->half + ((h >> 31) & s->negative)) >> s->right;
}

static inline int32_t add_input(const add_step *s, int32_t x)
{
    return add_rescale(s, s->offset2x + x * s->scale2x);
}

static inline int32_t add_output(const add_step *s, const mb_add_s8_params *p, int32_t sum)
{
    const int32_t out = add_rescale(s, sum * 2) + p->output_offset;
    return out < p->activation_min ? p->activation_min
                                   : (out > p->activation_max ? p->activation_max : out);
}

/* ADD's row (sign2 = 1) and SUB's (sign2 = -1) for element type T: a constant at each call,
 * folded when inlined. The int8 and the 16x8 rows are the same code (left_shift 20 or 15 in the
 * parameters), so one macro defines both. */
#define ROW_FAST(NAME, T)                                                                     \
    static inline void NAME(const void *params, const T *a, int32_t a_step, const T *b,       \
                            int32_t b_step, T *out, int32_t n, int32_t sign2)                 \
    {                                                                                         \
        const mb_add_s8_params *p = (const mb_add_s8_params *)params;                         \
        const add_step s1 = make_step(p->input1_offset, p->left_shift, p->input1_multiplier, \
                                      p->input1_shift);                                       \
        const add_step s2 = make_step(p->input2_offset, p->left_shift, p->input2_multiplier, \
                                      p->input2_shift);                                       \
        const add_step so = make_step(0, 0, p->output_multiplier, p->output_shift);           \
        if (a_step == 1 && b_step == 1) {                                                     \
            for (int32_t i = 0; i < n; i++) {                                                 \
                out[i] = (T)add_output(&so, p, add_input(&s1, a[i]) +                         \
                                                   sign2 * add_input(&s2, b[i]));             \
            }                                                                                 \
        } else if (b_step == 0) {                                                             \
            const int32_t scaled2 = sign2 * add_input(&s2, b[0]);                             \
            for (int32_t i = 0; i < n; i++) {                                                 \
                out[i] = (T)add_output(&so, p, add_input(&s1, a[i * a_step]) + scaled2);      \
            }                                                                                 \
        } else if (a_step == 0) {                                                             \
            const int32_t scaled1 = add_input(&s1, a[0]);                                     \
            for (int32_t i = 0; i < n; i++) {                                                 \
                out[i] = (T)add_output(&so, p, scaled1 + sign2 * add_input(&s2,               \
                                                                           b[i * b_step])); \
            }                                                                                 \
        } else {                                                                              \
            for (int32_t i = 0; i < n; i++) {                                                 \
                out[i] = (T)add_output(&so, p, add_input(&s1, a[i * a_step]) +                \
                                                   sign2 * add_input(&s2, b[i * b_step]));    \
            }                                                                                 \
        }                                                                                     \
    }

ROW_FAST(row_fast, int8_t)
ROW_FAST(row_fast_s16, int16_t)

static void add_row_fast(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                         int32_t b_step, int8_t *out, int32_t n)
{
    row_fast(params, a, a_step, b, b_step, out, n, 1);
}

static void sub_row_fast(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                         int32_t b_step, int8_t *out, int32_t n)
{
    row_fast(params, a, a_step, b, b_step, out, n, -1);
}

void mb_add_s8_fast(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, add_row_fast, params);
}

void mb_sub_s8_fast(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, sub_row_fast, params);
}

/* 16x8 ADD and SUB, variant "fast_s16": the same row on int16 elements. Why the 32-bit steps stay
 * exact (beside the int8 argument above): TFLM's int16 ADD/SUB take zero points 0 only and a
 * left shift of 15, so the doubled value an input step multiplies is x * 2^16 with
 * -2^15 <= x < 2^15: within [-2^31, 2^31 - 2^16], an int32. Its high-multiply result h is at most
 * 2^30 in magnitude (multiplier < 2^31), so h + 2^(r-1) fits int32 for every right shift r <= 31.
 * Each rescaled input is at most 2^29 (an input multiplier is at most 0.5), the sum or difference
 * of two at most 2^30: its double, the output step's operand, fits int32 as well. */
static void add_row_fast_s16(const void *params, const int16_t *a, int32_t a_step,
                             const int16_t *b, int32_t b_step, int16_t *out, int32_t n)
{
    row_fast_s16(params, a, a_step, b, b_step, out, n, 1);
}

static void sub_row_fast_s16(const void *params, const int16_t *a, int32_t a_step,
                             const int16_t *b, int32_t b_step, int16_t *out, int32_t n)
{
    row_fast_s16(params, a, a_step, b, b_step, out, n, -1);
}

void mb_add_s16_fast(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                     const int16_t *input1, const int16_t *input2, int16_t *output,
                     void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, add_row_fast_s16, params);
}

void mb_sub_s16_fast(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                     const int16_t *input1, const int16_t *input2, int16_t *output,
                     void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, sub_row_fast_s16, params);
}
