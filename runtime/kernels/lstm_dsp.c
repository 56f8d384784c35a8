/* UNIDIRECTIONAL_SEQUENCE_LSTM, Arm DSP variants "dsp" (int8) and "dsp_s16" (16x8) for
 * Cortex-M4/M7/M33/M55: the reference's body (lstm.c: gates, cell update, hidden state) around
 * row products on the DSP extension's dual 16-bit multiply-accumulates.
 *
 * The 8 weight matrices are pre-arranged at compile time as FULLY_CONNECTED's dsp variant has
 * them (arrange_rows(4, 4)): every group of four rows comes 4-byte chunk by chunk, the four rows'
 * chunks one after the other, so one pointer walks a group (no spills) and each group starts
 * where it did. Four rows per pass share each load of the vector. One 32-bit load brings 4 int8
 * weights; SXTB16 sign-extends bytes 0 and 2 into two int16 halves, SXTB16 with ROR #8 bytes 1
 * and 3.
 * - int8: the vector's word is split the same way once for the four rows, so SMLAD adds
 *   w0*x0 + w2*x2 and w1*x1 + w3*x3 into int32: 25 instructions per 16 MACs with the loop;
 * - 16x8: the chunks are stored w0 w2 w1 w3, so the two SXTB16 give (w0, w1) and (w2, w3) and
 *   SMLALD adds them with the vector's int16 words as loaded into the reference's int64 sums.
 * Sums are exact (int8: the compiler bounds them below 2^31), so the order does not matter. */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/lstm.h"

static inline uint32_t load32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

/* The arranged groups are word-aligned (aligned arrays, groups 4 x cols bytes apart): aligned
 * reads of four consecutive words let the compiler use LDRD/LDM. */
typedef uint32_t __attribute__((may_alias)) mb_word;

static inline int32_t even(uint32_t v)
{
    return (int32_t)__sxtb16((int32_t)v);
}

/* Bytes 1 and 3: SXTB16 with its own ROR #8 (GCC would not fold a separate rotate). */
static inline int32_t odd(uint32_t v)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

/* acc[0..3] += four rows . v on the arranged group: [cols / 4][4 rows][4 bytes], then the last
 * cols % 4 bytes of each row, row after row. */
static void group_s8(const int8_t *w, int32_t cols, const int8_t *v, int32_t *acc)
{
    const int32_t full = cols & ~3;
    const int8_t *const end = v + full;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int8_t *q = w;
    for (; v != end; v += 4, q += 16) {
        const uint32_t x = load32(v);
        const int32_t xe = even(x), xo = odd(x);
        const mb_word *qw = (const mb_word *)(const void *)q;
        const uint32_t q0 = qw[0], q1 = qw[1], q2 = qw[2], q3 = qw[3];
        a0 = __smlad(even(q0), xe, a0);
        a0 = __smlad(odd(q0), xo, a0);
        a1 = __smlad(even(q1), xe, a1);
        a1 = __smlad(odd(q1), xo, a1);
        a2 = __smlad(even(q2), xe, a2);
        a2 = __smlad(odd(q2), xo, a2);
        a3 = __smlad(even(q3), xe, a3);
        a3 = __smlad(odd(q3), xo, a3);
    }
    const int32_t tail = cols - full;
    for (int32_t c = 0; c < tail; c++) {
        const int32_t x = v[c];
        a0 += q[c] * x;
        a1 += q[tail + c] * x;
        a2 += q[2 * tail + c] * x;
        a3 += q[3 * tail + c] * x;
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

static void dot_s8_dsp(const int8_t *w, int32_t cols, const int8_t *v, int32_t n, int32_t *acc)
{
    if (n == 4) {
        group_s8(w, cols, v, acc);
        return;
    }
    for (int32_t r = 0; r < n; r++) { /* the last rows of a gate (units % 4), as stored */
        const int8_t *row = w + r * cols;
        int32_t a = acc[r];
        int32_t c = 0;
        for (; c + 4 <= cols; c += 4) {
            const uint32_t x = load32(v + c), q = load32(row + c);
            a = __smlad(even(q), even(x), a);
            a = __smlad(odd(q), odd(x), a);
        }
        for (; c < cols; c++) {
            a += row[c] * v[c];
        }
        acc[r] = a;
    }
}

/* The 16x8 groups are arranged the same way, each whole 4-byte chunk stored w0 w2 w1 w3: SXTB16
 * then gives the pairs (w0, w1) and (w2, w3), which SMLALD multiplies with the vector's words
 * (x0, x1) and (x2, x3) as loaded. */
static void group_s16(const int8_t *w, int32_t cols, const int16_t *v, int64_t *acc)
{
    const int32_t full = cols & ~3;
    const int16_t *const end = v + full;
    int64_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int8_t *q = w;
    for (; v != end; v += 4, q += 16) {
        const int32_t x01 = (int32_t)load32(v), x23 = (int32_t)load32(v + 2);
        const mb_word *qw = (const mb_word *)(const void *)q;
        const uint32_t q0 = qw[0], q1 = qw[1], q2 = qw[2], q3 = qw[3];
        a0 = __smlald(even(q0), x01, a0);
        a0 = __smlald(odd(q0), x23, a0);
        a1 = __smlald(even(q1), x01, a1);
        a1 = __smlald(odd(q1), x23, a1);
        a2 = __smlald(even(q2), x01, a2);
        a2 = __smlald(odd(q2), x23, a2);
        a3 = __smlald(even(q3), x01, a3);
        a3 = __smlald(odd(q3), x23, a3);
    }
    const int32_t tail = cols - full;
    for (int32_t c = 0; c < tail; c++) {
        const int32_t x = v[c];
        a0 += q[c] * x;
        a1 += q[tail + c] * x;
        a2 += q[2 * tail + c] * x;
        a3 += q[3 * tail + c] * x;
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

static void dot_s16_dsp(const int8_t *w, int32_t cols, const int16_t *v, int32_t n,
                        int64_t *acc)
{
    if (n == 4) {
        group_s16(w, cols, v, acc);
        return;
    }
    for (int32_t r = 0; r < n; r++) { /* the last rows, as stored */
        const int8_t *row = w + r * cols;
        int64_t a = acc[r];
        for (int32_t c = 0; c < cols; c++) {
            a += row[c] * v[c];
        }
        acc[r] = a;
    }
}

void mb_lstm_s8_dsp(const mb_lstm_params *p, const int8_t *input, const int8_t *const weights[8],
                    const int32_t *bias, int8_t *hidden, int16_t *cell, int8_t *output,
                    void *scratch)
{
    mb_lstm_s8_with(p, input, weights, bias, hidden, cell, output, scratch, dot_s8_dsp);
}

void mb_lstm_s16_dsp(const mb_lstm_params *p, const int16_t *input,
                     const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                     int16_t *cell, int16_t *output, void *scratch)
{
    mb_lstm_s16_with(p, input, weights, bias, hidden, cell, output, scratch, dot_s16_dsp);
}

#endif
