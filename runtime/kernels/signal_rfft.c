#include "microbuild/kernels/signal_rfft.h"

#include <string.h>

#include "microbuild/kernels/signal_common.h"

typedef struct {
    int16_t r;
    int16_t i;
} mb_cpx16;

/* (x + 2^14) >> 15, kept to 16 bits: kiss_fft's sround. */
static int16_t sround(int32_t x)
{
    return mb_sig_wrap16(mb_sig_asr32(x + ((int32_t)1 << 14), 15));
}

/* kiss_fft's C_FIXDIV: multiply by 32767 / radix (integer division) with rounding. */
static void fixdiv(mb_cpx16 *c, int32_t scale)
{
    c->r = sround((int32_t)c->r * scale);
    c->i = sround((int32_t)c->i * scale);
}

static mb_cpx16 load(const int16_t *c)
{
    mb_cpx16 v;
    v.r = c[0];
    v.i = c[1];
    return v;
}

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32) && !defined(__ARM_BIG_ENDIAN)
/* Arm DSP (Cortex-M4/M7/M33/M55): a complex value is one 32-bit word, re in the low half, and the
 * butterflies and the split below are the portable ones (#else) with every step one or two
 * instructions: the int16-wrapping adds are SADD16/SSUB16 (SSAX/SASX for the +-j rotations),
 * each rounded product (kiss_fft's sround, (x + 2^14) >> 15 kept to 16 bits) an SMLxxD or
 * SMLAxB with 2^14 as the accumulator, the two halves then packed back. The same integer
 * results bit for bit, in about half the instructions. */
#include <arm_acle.h>

static inline int32_t load_word(const int16_t *c)
{
    int32_t w;
    memcpy(&w, c, 4);
    return w;
}

static inline void store_word(int16_t *c, int32_t w)
{
    memcpy(c, &w, 4);
}

/* sround of both halves: the low 16 bits of re >> 15 and of im >> 15. The top half of im << 1
 * is the latter, so one PKHTB packs them (GCC spells the masks out in three instructions and
 * the 0xFFFF0000 mask keeps a register busy). */
static inline int32_t pack_rounded(int32_t re, int32_t im)
{
    int32_t packed;
    const int32_t doubled = (int32_t)((uint32_t)im << 1);
    __asm__("pkhtb %0, %1, %2, asr #15" : "=r"(packed) : "r"(doubled), "r"(re));
    return packed;
}

/* The low half of `low` and the high half of `high` (one PKHBT; GCC spells the masks out). */
static inline int32_t pack_halves(int32_t low, int32_t high)
{
    int32_t packed;
    __asm__("pkhbt %0, %1, %2" : "=r"(packed) : "r"(low), "r"(high));
    return packed;
}

static inline int32_t fixdiv_word(int32_t c, int32_t scale)
{
    /* 0x4000, half of a Q15 unit, rounds the product (a literal: the runtime never shifts a plain
     * int one, which is 16 bits on AVR) */
    return pack_rounded(__smlabb(c, scale, 0x4000), __smlatb(c, scale, 0x4000));
}

/* (a.r tw.r - a.i tw.i, a.r tw.i + a.i tw.r), each sround-ed: cmul below. */
static inline int32_t cmul_word(int32_t a, const int16_t *tw)
{
    const int32_t t = load_word(tw);
    return pack_rounded(__smlsd(a, t, 0x4000), __smladx(a, t, 0x4000));
}

static void radix2(int16_t *out, int32_t fstride, const int16_t *tw, int32_t m)
{
    for (int32_t k = 0; k < m; k++) {
        const int32_t a = fixdiv_word(load_word(&out[2 * k]), 32767 / 2);
        const int32_t b = fixdiv_word(load_word(&out[2 * (k + m)]), 32767 / 2);
        const int32_t t = cmul_word(b, &tw[2 * k * fstride]);
        store_word(&out[2 * (k + m)], __ssub16(a, t));
        store_word(&out[2 * k], __sadd16(a, t));
    }
}

/* Always inlined: in a last stage (m = 1, a constant there) its loop and its loads of what
 * last_stage has just stored fold away. */
static inline __attribute__((always_inline)) void radix4(int16_t *out, int32_t fstride,
                                                         const int16_t *tw, int32_t m)
{
    for (int32_t k = 0; k < m; k++) {
        int32_t f0 = fixdiv_word(load_word(&out[2 * k]), 32767 / 4);
        const int32_t f1 = fixdiv_word(load_word(&out[2 * (k + m)]), 32767 / 4);
        const int32_t f2 = fixdiv_word(load_word(&out[2 * (k + 2 * m)]), 32767 / 4);
        const int32_t f3 = fixdiv_word(load_word(&out[2 * (k + 3 * m)]), 32767 / 4);
        const int32_t s0 = cmul_word(f1, &tw[2 * k * fstride]);
        const int32_t s1 = cmul_word(f2, &tw[2 * 2 * k * fstride]);
        const int32_t s2 = cmul_word(f3, &tw[2 * 3 * k * fstride]);
        const int32_t s5 = __ssub16(f0, s1);
        f0 = __sadd16(f0, s1);
        const int32_t s3 = __sadd16(s0, s2);
        const int32_t s4 = __ssub16(s0, s2);
        store_word(&out[2 * (k + 2 * m)], __ssub16(f0, s3));
        store_word(&out[2 * k], __sadd16(f0, s3));
        store_word(&out[2 * (k + m)], __ssax(s5, s4));     /* (s5.r + s4.i, s5.i - s4.r) */
        store_word(&out[2 * (k + 3 * m)], __sasx(s5, s4)); /* (s5.r - s4.i, s5.i + s4.r) */
    }
}

/* kiss_fftr's split (the portable untangle below), on words: (x + t) >> 1 per half is one
 * SHADD16 and (a - b) >> 1 one SHSUB16, exact as the 32-bit sums they replace fit 17 bits. */
static void untangle(const int16_t *spectrum, int16_t *y, const int16_t *st, int32_t ncfft)
{
    for (int32_t k = 1; k <= ncfft / 2; k++) {
        const int32_t fpk = fixdiv_word(load_word(&spectrum[2 * k]), 32767 / 2);
        const int32_t mirrored = load_word(&spectrum[2 * (ncfft - k)]);
        /* Its conjugate: the imaginary half negated, wrapping as TFLM's int16. */
        const int32_t conjugate = pack_halves(mirrored, __ssub16(0, mirrored));
        const int32_t fpnk = fixdiv_word(conjugate, 32767 / 2);
        const int32_t f1k = __sadd16(fpk, fpnk);
        const int32_t tw = cmul_word(__ssub16(fpk, fpnk), &st[2 * (k - 1)]);
        store_word(&y[2 * k], __shadd16(f1k, tw));
        /* ((f1k.r - tw.r) >> 1, (tw.i - f1k.i) >> 1) */
        store_word(&y[2 * (ncfft - k)], __shsub16(pack_halves(f1k, tw), pack_halves(tw, f1k)));
    }
}

#else

static mb_cpx16 cmul(mb_cpx16 a, const int16_t *tw)
{
    mb_cpx16 m;
    m.r = sround((int32_t)a.r * tw[0] - (int32_t)a.i * tw[1]);
    m.i = sround((int32_t)a.r * tw[1] + (int32_t)a.i * tw[0]);
    return m;
}

static mb_cpx16 cadd(mb_cpx16 a, mb_cpx16 b)
{
    mb_cpx16 s;
    s.r = mb_sig_wrap16((int32_t)a.r + b.r);
    s.i = mb_sig_wrap16((int32_t)a.i + b.i);
    return s;
}

static mb_cpx16 csub(mb_cpx16 a, mb_cpx16 b)
{
    mb_cpx16 s;
    s.r = mb_sig_wrap16((int32_t)a.r - b.r);
    s.i = mb_sig_wrap16((int32_t)a.i - b.i);
    return s;
}

static void store(int16_t *c, mb_cpx16 v)
{
    c[0] = v.r;
    c[1] = v.i;
}

/* Complex values are (re, im) pairs of int16: element k of a vector is at [2k], [2k + 1]. */
static void radix2(int16_t *out, int32_t fstride, const int16_t *tw, int32_t m)
{
    for (int32_t k = 0; k < m; k++) {
        mb_cpx16 a = load(&out[2 * k]);
        mb_cpx16 b = load(&out[2 * (k + m)]);
        fixdiv(&a, 32767 / 2);
        fixdiv(&b, 32767 / 2);
        const mb_cpx16 t = cmul(b, &tw[2 * k * fstride]);
        store(&out[2 * (k + m)], csub(a, t));
        store(&out[2 * k], cadd(a, t));
    }
}

static void radix4(int16_t *out, int32_t fstride, const int16_t *tw, int32_t m)
{
    for (int32_t k = 0; k < m; k++) {
        mb_cpx16 f0 = load(&out[2 * k]);
        mb_cpx16 f1 = load(&out[2 * (k + m)]);
        mb_cpx16 f2 = load(&out[2 * (k + 2 * m)]);
        mb_cpx16 f3 = load(&out[2 * (k + 3 * m)]);
        fixdiv(&f0, 32767 / 4);
        fixdiv(&f1, 32767 / 4);
        fixdiv(&f2, 32767 / 4);
        fixdiv(&f3, 32767 / 4);
        const mb_cpx16 s0 = cmul(f1, &tw[2 * k * fstride]);
        const mb_cpx16 s1 = cmul(f2, &tw[2 * 2 * k * fstride]);
        const mb_cpx16 s2 = cmul(f3, &tw[2 * 3 * k * fstride]);
        const mb_cpx16 s5 = csub(f0, s1);
        f0 = cadd(f0, s1);
        const mb_cpx16 s3 = cadd(s0, s2);
        const mb_cpx16 s4 = csub(s0, s2);
        store(&out[2 * (k + 2 * m)], csub(f0, s3));
        store(&out[2 * k], cadd(f0, s3));
        f1.r = mb_sig_wrap16((int32_t)s5.r + s4.i);
        f1.i = mb_sig_wrap16((int32_t)s5.i - s4.r);
        f3.r = mb_sig_wrap16((int32_t)s5.r - s4.i);
        f3.i = mb_sig_wrap16((int32_t)s5.i + s4.r);
        store(&out[2 * (k + m)], f1);
        store(&out[2 * (k + 3 * m)], f3);
    }
}

/* kiss_fftr's split of the half-length FFT's result into the real input's spectrum, bins 1 ..
 * ncfft - 1 (both halves of each pair k, ncfft - k). */
static void untangle(const int16_t *spectrum, int16_t *y, const int16_t *st, int32_t ncfft)
{
    for (int32_t k = 1; k <= ncfft / 2; k++) {
        mb_cpx16 fpk = load(&spectrum[2 * k]);
        mb_cpx16 fpnk;
        fpnk.r = spectrum[2 * (ncfft - k)];
        fpnk.i = mb_sig_wrap16(-(int32_t)spectrum[2 * (ncfft - k) + 1]);
        fixdiv(&fpk, 32767 / 2);
        fixdiv(&fpnk, 32767 / 2);
        const mb_cpx16 f1k = cadd(fpk, fpnk);
        const mb_cpx16 f2k = csub(fpk, fpnk);
        const mb_cpx16 tw = cmul(f2k, &st[2 * (k - 1)]);
        y[2 * k] = mb_sig_wrap16(mb_sig_asr32((int32_t)f1k.r + tw.r, 1));
        y[2 * k + 1] = mb_sig_wrap16(mb_sig_asr32((int32_t)f1k.i + tw.i, 1));
        y[2 * (ncfft - k)] = mb_sig_wrap16(mb_sig_asr32((int32_t)f1k.r - tw.r, 1));
        y[2 * (ncfft - k) + 1] = mb_sig_wrap16(mb_sig_asr32((int32_t)tw.i - f1k.i, 1));
    }
}

#endif

/* The butterflies of one stage: radix-p recombination of p transforms of length m in `out`. */
static void recombine(int16_t *out, int32_t p, int32_t fstride, const int16_t *tw, int32_t m)
{
    if (p == 4) {
        radix4(out, fstride, tw, m);
    } else {
        radix2(out, fstride, tw, m);
    }
}

/* A last stage (length p, m = 1): its inputs are p complex samples of the frame, from int16 index
 * `first` every 2 * fstride, each read as one (re, im) pair where it is all inside the frame's
 * `length` samples; past them (the zero padding up to fft_length) a value is 0, so no padded
 * copy of the frame is needed. */
static void last_stage(int16_t *out, const int16_t *frame, int32_t length, int32_t first,
                       int32_t fstride, int32_t p, const int16_t *tw)
{
    if (first + 2 * fstride * (p - 1) + 1 < length) { /* all inside: no test per sample */
        for (int32_t q = 0; q < p; q++, first += 2 * fstride) {
            memcpy(&out[2 * q], &frame[first], 2 * sizeof(int16_t));
        }
        recombine(out, p, fstride, tw, 1);
        return;
    }
    for (int32_t q = 0; q < p; q++, first += 2 * fstride) {
        if (first + 1 < length) {
            memcpy(&out[2 * q], &frame[first], 2 * sizeof(int16_t));
        } else {
            out[2 * q] = first < length ? frame[first] : 0;
            out[2 * q + 1] = 0;
        }
    }
    recombine(out, p, fstride, tw, 1);
}

/* One stage of kiss_fft's decimation in time: the radix-p split of the input (stride fstride,
 * from int16 index `at` of the frame) into p transforms of length m, each done recursively, then
 * recombined. The stage above the last runs the last stages itself (no call per group of p
 * samples: that call cost as much as the group's butterfly). */
static void fft_stage(int16_t *out, const int16_t *frame, int32_t length, int32_t at,
                      int32_t fstride, const int32_t *factors, const int16_t *tw)
{
    const int32_t p = factors[0];
    const int32_t m = factors[1];
    for (int32_t q = 0; q < p; q++) {
        const int32_t first = at + 2 * q * fstride;
        if (m == 1) {
            out[2 * q] = first < length ? frame[first] : 0;
            out[2 * q + 1] = first + 1 < length ? frame[first + 1] : 0;
        } else if (factors[3] == 1) {
            last_stage(out + 2 * q * m, frame, length, first, fstride * p, factors[2], tw);
        } else {
            fft_stage(out + 2 * q * m, frame, length, first, fstride * p, factors + 2, tw);
        }
    }
    recombine(out, p, fstride, tw, m);
}

void mb_signal_rfft(const mb_signal_rfft_params *p, const int16_t *input, int16_t *output,
                    void *scratch)
{
    const int32_t n = p->fft_length;
    const int32_t ncfft = n / 2;
    int16_t *spectrum = (int16_t *)scratch; /* ncfft complex values */
    const int16_t *st = p->super_twiddles;
    for (int32_t frame = 0; frame < p->frames; frame++) {
        int16_t *y = output + frame * (n + 2);
        /* The samples in pairs are the complex input of a half-length FFT. */
        fft_stage(spectrum, input + frame * p->input_length, p->input_length, 0, 1, p->factors,
                  p->twiddles);

        mb_cpx16 dc = load(&spectrum[0]);
        fixdiv(&dc, 32767 / 2);
        y[0] = mb_sig_wrap16((int32_t)dc.r + dc.i);
        y[1] = 0;
        y[2 * ncfft] = mb_sig_wrap16((int32_t)dc.r - dc.i);
        y[2 * ncfft + 1] = 0;
        untangle(spectrum, y, st, ncfft);
    }
}
