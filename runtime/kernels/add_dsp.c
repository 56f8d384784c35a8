/* ADD, Arm DSP variants "dsp", "dsp_lut" and "dsp_s16" (Cortex-M4/M7/M33/M55): add_portable.c's
 * exact arithmetic (read its comment for why it equals TFLM's) with each rounding doubling high
 * multiply one SMMULR, two elements per iteration, and a broadcast operand rescaled once per run.
 * SUB's "dsp" and "dsp_s16" (mb_sub_s8_dsp, mb_sub_s16_dsp) are the same rows subtracting the
 * second rescaled input (add_portable.c says why that, and not a negated multiplier, is exact). */
#if defined(__ARM_FEATURE_DSP)

#include "microbuild/kernels/add.h"
#include "microbuild/kernels/sub.h"

typedef struct {
    int32_t offset2x;   /* input offset * 2^(left_shift + 1) */
    int32_t multiplier;
    int32_t right;      /* right shift, >= 0 */
    int32_t half;       /* 2^(right - 1), 0 when right == 0 */
    int32_t negative;   /* -1 when right > 0, else 0 */
} add_step;

static add_step make_step(int32_t offset, int32_t left_shift, int32_t multiplier, int32_t shift)
{
    add_step s;
    const int32_t right = shift > 0 ? 0 : -shift;
    s.offset2x = offset * ((int32_t)1 << (left_shift + 1));
    s.multiplier = multiplier;
    s.right = right;
    s.half = right > 0 ? (int32_t)1 << (right - 1) : 0;
    s.negative = right > 0 ? -1 : 0;
    return s;
}

/* (a2 * m + 2^31) >> 32 */
static inline int32_t add_smmulr(int32_t a2, int32_t m)
{
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a2), "r"(m));
    return r;
}

static inline int32_t add_rescale(const add_step *s, int32_t a2)
{
    const int32_t h = add_smmulr(a2, s->multiplier);
    return (h + s->half + ((h >> 31) & s->negative)) >> s->right;
}

static inline int32_t add_clamp(const mb_add_s8_params *p, int32_t v)
{
    return v < p->activation_min ? p->activation_min
                                 : (v > p->activation_max ? p->activation_max : v);
}

/* ADD's row (sign2 = 1) and SUB's (sign2 = -1): a constant at each call, folded when inlined. */
static inline void row_dsp(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                           int32_t b_step, int8_t *out, int32_t n, int32_t sign2)
{
    const mb_add_s8_params *p = (const mb_add_s8_params *)params;
    const int32_t ls = p->left_shift + 1;
    const add_step s1 = make_step(p->input1_offset, p->left_shift, p->input1_multiplier,
                                  p->input1_shift);
    const add_step s2 = make_step(p->input2_offset, p->left_shift, p->input2_multiplier,
                                  p->input2_shift);
    const add_step so = make_step(0, 0, p->output_multiplier, p->output_shift);
    const int32_t zp = p->output_offset;
    if (a_step == 1 && b_step == 1) {
        int32_t i = 0;
        for (; i + 2 <= n; i += 2) {
            const int32_t a0 = a[i];
            const int32_t a1 = a[i + 1];
            const int32_t b0 = b[i];
            const int32_t b1 = b[i + 1];
            const int32_t sum0 = add_rescale(&s1, s1.offset2x + a0 * ((int32_t)1 << ls)) +
                                 sign2 * add_rescale(&s2, s2.offset2x + b0 * ((int32_t)1 << ls));
            const int32_t sum1 = add_rescale(&s1, s1.offset2x + a1 * ((int32_t)1 << ls)) +
                                 sign2 * add_rescale(&s2, s2.offset2x + b1 * ((int32_t)1 << ls));
            out[i] = (int8_t)add_clamp(p, add_rescale(&so, sum0 * 2) + zp);
            out[i + 1] = (int8_t)add_clamp(p, add_rescale(&so, sum1 * 2) + zp);
        }
        if (i < n) {
            const int32_t sum = add_rescale(&s1, s1.offset2x + a[i] * ((int32_t)1 << ls)) +
                                sign2 * add_rescale(&s2, s2.offset2x + b[i] * ((int32_t)1 << ls));
            out[i] = (int8_t)add_clamp(p, add_rescale(&so, sum * 2) + zp);
        }
    } else if (b_step == 0) {
        const int32_t scaled2 =
            sign2 * add_rescale(&s2, s2.offset2x + b[0] * ((int32_t)1 << ls));
        for (int32_t i = 0; i < n; i++) {
            const int32_t sum = add_rescale(&s1, s1.offset2x + a[i * a_step] * ((int32_t)1 << ls));
            out[i] = (int8_t)add_clamp(p, add_rescale(&so, (sum + scaled2) * 2) + zp);
        }
    } else if (a_step == 0) {
        const int32_t scaled1 = add_rescale(&s1, s1.offset2x + a[0] * ((int32_t)1 << ls));
        for (int32_t i = 0; i < n; i++) {
            const int32_t sum =
                sign2 * add_rescale(&s2, s2.offset2x + b[i * b_step] * ((int32_t)1 << ls));
            out[i] = (int8_t)add_clamp(p, add_rescale(&so, (scaled1 + sum) * 2) + zp);
        }
    } else {
        for (int32_t i = 0; i < n; i++) {
            const int32_t sum =
                add_rescale(&s1, s1.offset2x + a[i * a_step] * ((int32_t)1 << ls)) +
                sign2 * add_rescale(&s2, s2.offset2x + b[i * b_step] * ((int32_t)1 << ls));
            out[i] = (int8_t)add_clamp(p, add_rescale(&so, sum * 2) + zp);
        }
    }
}

static void add_row_dsp(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                        int32_t b_step, int8_t *out, int32_t n)
{
    row_dsp(params, a, a_step, b, b_step, out, n, 1);
}

static void sub_row_dsp(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                        int32_t b_step, int8_t *out, int32_t n)
{
    row_dsp(params, a, a_step, b, b_step, out, n, -1);
}

void mb_add_s8_dsp(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, add_row_dsp, params);
}

void mb_sub_s8_dsp(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                   const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, sub_row_dsp, params);
}

/* 16x8 ADD and SUB, variant "dsp_s16": the dsp arithmetic on int16 elements, two a word. TFLM's
 * int16 ADD/SUB take zero points 0 only and a left shift of 15, so an input step's doubled
 * operand is x * 2^16: the low element of a loaded word shifted left 16, the high one masked
 * with 0xFFFF0000 (one instruction each, no sign extension). add_portable.c's "fast_s16" comment
 * says why every step stays within int32; the output offset (zero) is left out for the same
 * reason. Two results are stored as one word. */
static inline uint32_t load_pair(const int16_t *p)
{
    uint32_t w;
    __builtin_memcpy(&w, p, sizeof w); /* one LDR: ARMv7E-M loads halfword-aligned words */
    return w;
}

static inline void store_pair(int16_t *p, int32_t lo, int32_t hi)
{
    const uint32_t w = (uint32_t)(uint16_t)lo | ((uint32_t)hi << 16);
    __builtin_memcpy(p, &w, sizeof w);
}

/* The output step of a sum (or difference) of two rescaled inputs, clamped. */
static inline int32_t out_s16(const add_step *so, int32_t lo, int32_t hi, int32_t sum)
{
    const int32_t v = add_rescale(so, sum * 2);
    return v < lo ? lo : (v > hi ? hi : v);
}

static inline void row_dsp_s16(const void *params, const int16_t *a, int32_t a_step,
                               const int16_t *b, int32_t b_step, int16_t *out, int32_t n,
                               int32_t sign2)
{
    const mb_add_s8_params *p = (const mb_add_s8_params *)params;
    const add_step s1 = make_step(0, p->left_shift, p->input1_multiplier, p->input1_shift);
    const add_step s2 = make_step(0, p->left_shift, p->input2_multiplier, p->input2_shift);
    const add_step so = make_step(0, 0, p->output_multiplier, p->output_shift);
    const int32_t lo = p->activation_min;
    const int32_t hi = p->activation_max;
    if (a_step == 1 && b_step == 1) {
        int32_t i = 0;
        for (; i + 2 <= n; i += 2) {
            const uint32_t wa = load_pair(a + i);
            const uint32_t wb = load_pair(b + i);
            const int32_t sum0 = add_rescale(&s1, (int32_t)(wa << 16)) +
                                 sign2 * add_rescale(&s2, (int32_t)(wb << 16));
            const int32_t sum1 = add_rescale(&s1, (int32_t)(wa & 0xFFFF0000u)) +
                                 sign2 * add_rescale(&s2, (int32_t)(wb & 0xFFFF0000u));
            store_pair(out + i, out_s16(&so, lo, hi, sum0), out_s16(&so, lo, hi, sum1));
        }
        if (i < n) {
            const int32_t sum = add_rescale(&s1, (int32_t)((uint32_t)a[i] << 16)) +
                                sign2 * add_rescale(&s2, (int32_t)((uint32_t)b[i] << 16));
            out[i] = (int16_t)out_s16(&so, lo, hi, sum);
        }
    } else if (a_step == 0 || b_step == 0) {
        /* One operand broadcast: its rescaled value once, the other's two a word when dense. */
        const int32_t fixed =
            a_step == 0 ? add_rescale(&s1, (int32_t)((uint32_t)a[0] << 16))
                        : sign2 * add_rescale(&s2, (int32_t)((uint32_t)b[0] << 16));
        const int16_t *x = a_step == 0 ? b : a;
        const int32_t step = a_step == 0 ? b_step : a_step;
        const add_step *sx = a_step == 0 ? &s2 : &s1;
        const int32_t sign = a_step == 0 ? sign2 : 1;
        int32_t i = 0;
        if (step == 1) {
            for (; i + 2 <= n; i += 2) {
                const uint32_t w = load_pair(x + i);
                const int32_t sum0 = fixed + sign * add_rescale(sx, (int32_t)(w << 16));
                const int32_t sum1 = fixed + sign * add_rescale(sx, (int32_t)(w & 0xFFFF0000u));
                store_pair(out + i, out_s16(&so, lo, hi, sum0), out_s16(&so, lo, hi, sum1));
            }
        }
        for (; i < n; i++) {
            const int32_t sum =
                fixed + sign * add_rescale(sx, (int32_t)((uint32_t)x[i * step] << 16));
            out[i] = (int16_t)out_s16(&so, lo, hi, sum);
        }
    } else {
        for (int32_t i = 0; i < n; i++) {
            const int32_t sum =
                add_rescale(&s1, (int32_t)((uint32_t)a[i * a_step] << 16)) +
                sign2 * add_rescale(&s2, (int32_t)((uint32_t)b[i * b_step] << 16));
            out[i] = (int16_t)out_s16(&so, lo, hi, sum);
        }
    }
}

static void add_row_dsp_s16(const void *params, const int16_t *a, int32_t a_step,
                            const int16_t *b, int32_t b_step, int16_t *out, int32_t n)
{
    row_dsp_s16(params, a, a_step, b, b_step, out, n, 1);
}

static void sub_row_dsp_s16(const void *params, const int16_t *a, int32_t a_step,
                            const int16_t *b, int32_t b_step, int16_t *out, int32_t n)
{
    row_dsp_s16(params, a, a_step, b, b_step, out, n, -1);
}

void mb_add_s16_dsp(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, add_row_dsp_s16, params);
}

void mb_sub_s16_dsp(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                    const int16_t *input1, const int16_t *input2, int16_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s16(shape, input1, input2, output, sub_row_dsp_s16, params);
}

/* dsp_lut: the same arithmetic, each input's rescaling (the two SMMULR steps of add_row_dsp
 * that depend on one int8 value only) looked up in two 256-entry tables built in scratch once per
 * call by add_rescale itself, so every output is the same sum of the same two values. The loop
 * then keeps only the output step: about 20 instructions per element instead of 46, and 512
 * rescalings (~6,000 instructions) to build the tables; the tuner picks it for large ADDs. */
typedef struct {
    const mb_add_s8_params *p;
    const int32_t *t1; /* input 1's rescaled value of v at t1[v + 128] */
    const int32_t *t2;
} add_lut_job;

static void add_row_lut(const void *job, const int8_t *a, int32_t a_step, const int8_t *b,
                        int32_t b_step, int8_t *out, int32_t n)
{
    const add_lut_job *j = (const add_lut_job *)job;
    const mb_add_s8_params *p = j->p;
    /* Everything the loop reads in locals: the int8 stores could alias the params (C's rule
     * for char types), which would reload them per element. */
    const add_step so = make_step(0, 0, p->output_multiplier, p->output_shift);
    const int32_t zp = p->output_offset;
    const int32_t lo = p->activation_min;
    const int32_t hi = p->activation_max;
    const int32_t *t1 = j->t1 + 128;
    const int32_t *t2 = j->t2 + 128;
    if (a_step == 1 && b_step == 1) {
        for (const int8_t *end = a + n; a != end; a++, b++, out++) {
            const int32_t v = add_rescale(&so, (t1[*a] + t2[*b]) * 2) + zp;
            *out = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
        }
        return;
    }
    for (int32_t i = 0; i < n; i++, a += a_step, b += b_step) {
        const int32_t v = add_rescale(&so, (t1[*a] + t2[*b]) * 2) + zp;
        out[i] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
    }
}

void mb_add_s8_dsp_lut(const mb_add_s8_params *params, const mb_broadcast_shape *shape,
                       const int8_t *input1, const int8_t *input2, int8_t *output, void *scratch)
{
    const mb_add_s8_params *p = params;
    const int32_t ls = p->left_shift + 1;
    const add_step s1 = make_step(p->input1_offset, p->left_shift, p->input1_multiplier,
                                  p->input1_shift);
    const add_step s2 = make_step(p->input2_offset, p->left_shift, p->input2_multiplier,
                                  p->input2_shift);
    int32_t *t = (int32_t *)scratch; /* 2 x 256 int32 (add.py's _scratch_lut) */
    for (int32_t v = -128; v < 128; v++) {
        t[v + 128] = add_rescale(&s1, s1.offset2x + v * ((int32_t)1 << ls));
        t[v + 384] = add_rescale(&s2, s2.offset2x + v * ((int32_t)1 << ls));
    }
    const add_lut_job job = {p, t, t + 256};
    mb_broadcast_binary_s8(shape, input1, input2, output, add_row_lut, &job);
}

#else
typedef int mb_add_dsp_unused;
#endif
