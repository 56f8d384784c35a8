/* gemmlowp's fixed-point arithmetic as TFLM's softmax uses it. A Qm.n value is a plain int32
 * holding round(v * 2^n) with m integer bits and n = 31 - m fractional bits. */
#include "microbuild/kernels/softmax.h"

#include "microbuild/quant.h"

#define SCALED_DIFF_INTEGER_BITS 5   /* exp() input: Q5.26 */
#define ACCUM_INTEGER_BITS 12        /* sum of exps: Q12.19 */

/* Fixed-point product: integer bits add up, raw = rounding doubling high mul. */
static int32_t fx_mul(int32_t a, int32_t b)
{
    return mb_saturating_rounding_doubling_high_mul(a, b);
}

/* x * 2^exponent, rounding when shifting right and saturating when shifting left. */
static int32_t fx_mul_pot(int32_t x, int exponent)
{
    if (exponent < 0) {
        return mb_rounding_divide_by_pot(x, -exponent);
    }
    if (exponent == 0) {
        return x;
    }
    const int32_t threshold = INT32_MAX >> exponent;
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << exponent);
}

/* exp(a) for a in [-1/4, 0), a in Q0.31, result in Q0.31: Taylor series around -1/8. */
static int32_t exp_on_quarter_interval(int32_t a)
{
    const int32_t exp_minus_one_eighth = 1895147668; /* exp(-1/8) in Q0.31 */
    const int32_t one_third = 715827883;             /* 1/3 in Q0.31 */
    const int32_t x = a + ((int32_t)1 << 28);        /* a + 1/8 */
    const int32_t x2 = fx_mul(x, x);
    const int32_t x3 = fx_mul(x2, x);
    const int32_t x4 = fx_mul(x2, x2);
    const int32_t x4_over_4 = fx_mul_pot(x4, -2);
    const int32_t poly = fx_mul_pot(fx_mul(x4_over_4 + x3, one_third) + x2, -1);
    return exp_minus_one_eighth + fx_mul(exp_minus_one_eighth, x + poly);
}

/* exp(a) for a <= 0 in Q5.26; result in Q0.31. The input is split into a remainder in
 * [-1/4, 0) handled by the series and a sum of -2^k terms multiplied in from a table. */
static int32_t exp_on_negative_values(int32_t a)
{
    const int fractional_bits = 31 - SCALED_DIFF_INTEGER_BITS;
    const int32_t one_quarter = (int32_t)1 << (fractional_bits - 2);
    const int32_t mask = one_quarter - 1;
    const int32_t a_mod_quarter_minus_quarter = (a & mask) - one_quarter;
    int32_t result = exp_on_quarter_interval(
        fx_mul_pot(a_mod_quarter_minus_quarter, SCALED_DIFF_INTEGER_BITS));
    const int32_t remainder = a_mod_quarter_minus_quarter - a;

    /* exp(-2^k) in Q0.31 for k = -2 .. 4: every power of two the remainder can contain. */
    static const int32_t exp_of_minus_pot[7] = {
        1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242,
    };
    for (int k = 0; k < 7; k++) {
        const int bit = fractional_bits - 2 + k;
        if (remainder & ((int32_t)1 << bit)) {
            result = fx_mul(result, exp_of_minus_pot[k]);
        }
    }
    return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + a) for a in [0, 1) in Q0.31, as gemmlowp: Newton-Raphson in Q2.29. */
static int32_t one_over_one_plus_x(int32_t a)
{
    /* (a + 1) / 2, rounded half away from zero, in Q0.31. */
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    const int32_t c48_over_17 = 1515870810;       /* Q2.29 */
    const int32_t c_neg_32_over_17 = -1010580540; /* Q2.29 */
    const int32_t one_q2_29 = (int32_t)1 << 29;
    int32_t x = c48_over_17 + fx_mul(half_denominator, c_neg_32_over_17);
    for (int i = 0; i < 3; i++) {
        const int32_t half_denominator_times_x = fx_mul(half_denominator, x);
        const int32_t one_minus = one_q2_29 - half_denominator_times_x;
        x = x + fx_mul_pot(fx_mul(x, one_minus), 2);
    }
    /* x / 2 in Q1.30 reinterpreted, then rescaled to Q0.31. */
    return fx_mul_pot(x, 1);
}

/* TFLM's GetReciprocal: 1/x for x in Q12.19 as a Q0.31 value and a power-of-two exponent. */
static int32_t reciprocal(int32_t x, int *num_bits_over_unit)
{
    const int headroom_plus_one = mb_count_leading_zeros((uint32_t)x);
    *num_bits_over_unit = ACCUM_INTEGER_BITS - headroom_plus_one;
    const int32_t shifted_minus_one =
        (int32_t)(((uint32_t)x << headroom_plus_one) - ((uint32_t)1 << 31));
    return one_over_one_plus_x(shifted_minus_one);
}

int32_t mb_softmax_reciprocal(int32_t sum_of_exps, int *num_bits_over_unit)
{
    return reciprocal(sum_of_exps, num_bits_over_unit);
}

static int32_t scaled_diff(const mb_softmax_s8_params *p, int32_t diff)
{
    /* MultiplyByQuantizedMultiplierGreaterThanOne: no rounding shift; diff_min guarantees
     * diff * 2^left_shift fits in int32. */
    return mb_saturating_rounding_doubling_high_mul(
        (int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
}

/* TFLM's integer Softmax for int8 input, with an int8 (out_bits 8) or int16 (16) output: only
 * the output's width changes the arithmetic, in the final rounding shift and the offset. */
static void softmax_rows(const mb_softmax_s8_params *params, const int8_t *input, int8_t *out8,
                         int16_t *out16)
{
    const int32_t depth = params->depth;
    const int out_bits = out8 ? 8 : 16;
    const int32_t out_min = out8 ? INT8_MIN : INT16_MIN;
    const int32_t out_max = out8 ? INT8_MAX : INT16_MAX;
    for (int32_t row = 0; row < params->rows; row++) {
        const int8_t *x = input + row * depth;

        int32_t max = INT8_MIN;
        for (int32_t c = 0; c < depth; c++) {
            max = x[c] > max ? x[c] : max;
        }

        int32_t sum_of_exps = 0; /* Q12.19 */
        for (int32_t c = 0; c < depth; c++) {
            const int32_t diff = x[c] - max;
            if (diff >= params->diff_min) {
                const int32_t e = exp_on_negative_values(scaled_diff(params, diff));
                sum_of_exps += fx_mul_pot(e, -ACCUM_INTEGER_BITS);
            }
        }

        int num_bits_over_unit;
        const int32_t scale = reciprocal(sum_of_exps, &num_bits_over_unit);
        const int exponent = num_bits_over_unit + 31 - out_bits;

        for (int32_t c = 0; c < depth; c++) {
            const int32_t diff = x[c] - max;
            int32_t out = out_min;
            if (diff >= params->diff_min) {
                const int32_t e = exp_on_negative_values(scaled_diff(params, diff));
                out = mb_rounding_divide_by_pot(fx_mul(scale, e), exponent) + out_min;
                out = mb_clamp_i32(out, out_min, out_max);
            }
            if (out8) {
                out8[row * depth + c] = (int8_t)out;
            } else {
                out16[row * depth + c] = (int16_t)out;
            }
        }
    }
}

void mb_softmax_s8(const mb_softmax_s8_params *params, const int8_t *input, int8_t *output)
{
    softmax_rows(params, input, output, (int16_t *)0);
}

void mb_softmax_s8_s16(const mb_softmax_s8_params *params, const int8_t *input, int16_t *output)
{
    softmax_rows(params, input, (int8_t *)0, output);
}

/* ---- LOG_SOFTMAX: the same exp() of scaled differences, then a fixed-point log -------------- */

/* gemmlowp-style x * 2^exponent for exponent >= 0, saturating (TFLite's
 * SaturatingRoundingMultiplyByPOTParam). */
static int32_t saturating_pot(int32_t x, int exponent)
{
    return exponent == 0 ? x : fx_mul_pot(x, exponent);
}

static int32_t saturating_add(int32_t a, int32_t b)
{
    const int64_t sum = (int64_t)a + b;
    return sum > INT32_MAX ? INT32_MAX : (sum < INT32_MIN ? INT32_MIN : (int32_t)sum);
}

static int32_t wrapping_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* TFLite's log_x_for_x_greater_than_or_equal_to_1<5>(FixedPoint<int32, 12> x): log(x) in Q5.26
 * for x >= 1 in Q12.19. The power of two of x is found from its leading zeros (twice, once for
 * x * sqrt(1/2), keeping the better of the two), and the log of the remaining factor, near 1, is
 * a rational approximation; both are accumulated with 6 integer bits. */
int32_t mb_softmax_log_q12_to_q5(int32_t x)
{
    const int input_integer_bits = ACCUM_INTEGER_BITS;
    const int accum_integer_bits = SCALED_DIFF_INTEGER_BITS + 1;
    const int32_t log_2 = 1488522236;           /* Q0.31 */
    const int32_t sqrt_sqrt_half = 1805811301;
    const int32_t sqrt_half = 1518500250;
    const int32_t one_quarter = 536870912;
    const int32_t alpha_n = 117049297;
    const int32_t alpha_d = 127690142;
    const int32_t alpha_i = 1057819769;
    const int32_t alpha_f = 638450708;
    const int32_t shifted_quarter = fx_mul_pot(one_quarter, -accum_integer_bits);

    const int z_a_headroom_plus_1 = mb_count_leading_zeros((uint32_t)x);
    const int32_t r_a_tmp = saturating_pot(x, z_a_headroom_plus_1 - 1);
    const int32_t r_a = saturating_pot(fx_mul(r_a_tmp, sqrt_half), 1);
    const int32_t z_a_pow_2_adj = saturating_add(
        saturating_pot(input_integer_bits - z_a_headroom_plus_1, 31 - accum_integer_bits),
        shifted_quarter);

    const int32_t z_b = fx_mul(x, sqrt_half);
    const int z_b_headroom = mb_count_leading_zeros((uint32_t)z_b) - 1;
    const int32_t r_b = saturating_pot(x, z_b_headroom);
    const int32_t z_b_pow_2_adj = saturating_add(
        saturating_pot(input_integer_bits - z_b_headroom, 31 - accum_integer_bits),
        -shifted_quarter);

    const int32_t r = r_a < r_b ? r_a : r_b;
    const int32_t z_pow_2_adj = z_a_pow_2_adj > z_b_pow_2_adj ? z_a_pow_2_adj : z_b_pow_2_adj;

    const int64_t half_sum = (int64_t)r + sqrt_sqrt_half;
    const int32_t p = (int32_t)((half_sum + (half_sum >= 0 ? 1 : -1)) / 2);
    int32_t q = wrapping_add(r, -sqrt_sqrt_half);
    q = wrapping_add(q, q);

    const int32_t common_sq = fx_mul(q, q);
    const int32_t num = wrapping_add(fx_mul(q, r), fx_mul(fx_mul(q, common_sq), alpha_n));
    const int32_t denom_minus_one = wrapping_add(
        fx_mul(p, wrapping_add(wrapping_add(alpha_i, q), fx_mul(alpha_d, common_sq))),
        fx_mul(alpha_f, q));
    const int32_t recip_denom = one_over_one_plus_x(denom_minus_one);

    const int32_t num_scaled = fx_mul_pot(num, -accum_integer_bits);
    return fx_mul_pot(wrapping_add(fx_mul(z_pow_2_adj, log_2), fx_mul(num_scaled, recip_denom)),
                      accum_integer_bits - SCALED_DIFF_INTEGER_BITS);
}

void mb_log_softmax_s8(const mb_log_softmax_s8_params *params, const int8_t *input,
                       int8_t *output)
{
    const int32_t depth = params->depth;
    for (int32_t row = 0; row < params->rows; row++) {
        const int8_t *x = input + row * depth;
        int8_t *y = output + row * depth;

        int32_t max = INT8_MIN;
        for (int32_t c = 0; c < depth; c++) {
            max = x[c] > max ? x[c] : max;
        }

        int32_t sum_of_exps = 0; /* Q12.19 */
        for (int32_t c = 0; c < depth; c++) {
            const int32_t diff = x[c] - max;
            if (diff >= params->diff_min) {
                const int32_t scaled = mb_mul_by_quantized_multiplier(
                    diff, params->input_multiplier, (int)params->input_left_shift);
                sum_of_exps = wrapping_add(
                    sum_of_exps, fx_mul_pot(exp_on_negative_values(scaled), -ACCUM_INTEGER_BITS));
            }
        }

        const int32_t log_sum = mb_softmax_log_q12_to_q5(sum_of_exps);
        /* The smallest difference whose result is representable, in input steps. */
        const int32_t rescaled_min = mb_mul_by_quantized_multiplier(
            wrapping_add(log_sum, INT32_MIN), params->reverse_scaling_divisor,
            (int)params->reverse_scaling_shift);
        const int32_t adjusted_diff_min =
            params->diff_min - 1 > rescaled_min ? params->diff_min - 1 : rescaled_min;

        for (int32_t c = 0; c < depth; c++) {
            const int32_t diff = x[c] - max;
            int32_t out = INT8_MIN;
            if (diff > adjusted_diff_min) {
                const int32_t scaled = mb_mul_by_quantized_multiplier(
                    diff, params->input_multiplier, (int)params->input_left_shift);
                /* Q5.26 to the output's Q4.3 steps (scale 16/256), offset 127. */
                out = mb_rounding_divide_by_pot(wrapping_add(scaled, -log_sum),
                                                31 - SCALED_DIFF_INTEGER_BITS - 4) + INT8_MAX;
                out = mb_clamp_i32(out, INT8_MIN, INT8_MAX);
            }
            y[c] = (int8_t)out;
        }
    }
}

/* ---- int16 -> int16 (TFLM's SoftmaxInt16) ---------------------------------------------------- */

/* TFLM's lut_lookup for an int16 input: segment 256 + value / 128 (floor), the table value there
 * plus the int16 slope to the next one times the position in the segment (0..127), rounded. */
static int16_t lut_lookup_s16(int32_t value, const int16_t *table)
{
    const int32_t biased = value + 32768; /* 0..65535: no shift of a negative value */
    const int32_t index = biased >> 7;
    const int32_t offset = biased & 0x7f;
    const int16_t base = table[index];
    const int16_t slope = (int16_t)(table[index + 1] - base);
    const int32_t delta = ((int32_t)slope * offset + 64) >> 7;
    return (int16_t)(base + delta);
}

static int32_t clamp_s16(int32_t v)
{
    return v < -32768 ? -32768 : (v > 32767 ? 32767 : v);
}

void mb_softmax_s16(const mb_softmax_s16_params *p, const int16_t *input, int16_t *output)
{
    for (int32_t row = 0; row < p->rows; row++) {
        const int16_t *in = input + row * p->depth;
        int16_t *out = output + row * p->depth;
        int16_t max = INT16_MIN;
        for (int32_t c = 0; c < p->depth; c++) {
            max = in[c] > max ? in[c] : max;
        }
        /* The exp values (Q0.15) go to the output first, as in TFLM; their sum is Q16.15. */
        int32_t sum = 0;
        for (int32_t c = 0; c < p->depth; c++) {
            const int32_t diff = (int32_t)in[c] - (int32_t)max;
            const int32_t scaled = mb_mul_by_quantized_multiplier(diff, p->input_multiplier,
                                                                  (int)p->input_shift);
            out[c] = lut_lookup_s16(clamp_s16(scaled + 32767), mb_softmax16_exp_table);
            sum += out[c];
        }
        /* 1 / sum: sum normalized to [2^14, 2^15) Q1.14 steps, x = sum - 1 recentred on int16. */
        const int headroom_plus_one = mb_count_leading_zeros((uint32_t)sum);
        const int32_t shifted = (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) +
                                           ((int64_t)1 << 13)) >> 14);
        const int32_t x = clamp_s16(shifted - (((int32_t)1 << 15) + ((int32_t)1 << 16)));
        const int16_t reciprocal = lut_lookup_s16(x, mb_softmax16_reciprocal_table);
        const int right_shift = 31 - headroom_plus_one;
        const int64_t round = (int64_t)1 << (right_shift - 1);
        for (int32_t c = 0; c < p->depth; c++) {
            const int32_t v = (int32_t)(((int64_t)out[c] * reciprocal + round) >> right_shift);
            out[c] = (int16_t)(v < 0 ? 0 : (v > 32767 ? 32767 : v));
        }
    }
}
