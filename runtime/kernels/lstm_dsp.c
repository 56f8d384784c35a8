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

#include "microbuild/asm_function.h"
#include "microbuild/dsp_words.h"
#include "microbuild/kernels/lstm.h"

/* The arranged groups are word-aligned (aligned arrays, groups 4 x cols bytes apart): aligned
 * reads of four consecutive words let the compiler use LDRD/LDM. */
typedef uint32_t __attribute__((may_alias)) mb_word;

/* The int8 vector (input row or hidden state) widened once per time step: every whole 4-byte
 * chunk as the two words SXTB16 makes of it, (x0, x2) and (x1, x3); then the last cols % 4 values
 * as int16. The four weight rows of a pass then only split their own words. */
const void *mb_dsp_widen_s8(const void *vector, int32_t cols, void *buffer)
{
    const int8_t *v = (const int8_t *)vector;
    int32_t *out = (int32_t *)buffer;
    const int32_t full = cols & ~3;
    for (int32_t c = 0; c < full; c += 4) {
        const uint32_t x = mb_load32(v + c);
        *out++ = mb_even16(x);
        *out++ = mb_odd16(x);
    }
    int16_t *tail = (int16_t *)out;
    for (int32_t c = full; c < cols; c++) {
        *tail++ = v[c];
    }
    return buffer;
}

/* The whole chunks of a group of four rows, in assembly on Thumb-2 (the C form below is what
 * an unoptimised build, or one with MB_CONV2D_DSP_C_BLOCKS, runs): acc[0..3] += the group's
 * chunks . the prepared vector from x to x_end (8 bytes a chunk); returns where the weights'
 * tail starts. Registers: r0 weights, r1 x, r2 x_end, r4-r7 the sums, r8/r9 the vector's pair,
 * r10-r12 and lr the four rows' words (LDM), r3 a temporary (the acc pointer is on the stack).
 * Per chunk (16 MACs): int8 weights 20 instructions, widened weights 13. */
#if defined(__thumb2__) && !defined(MB_CONV2D_DSP_C_BLOCKS)
#define LSTM_ASM_ROW_S8(W, A)                                                                   \
    "sxtb16 r3, " W "\n\t"                                                                      \
    "smlad  " A ", r3, r8, " A "\n\t"                                                           \
    "sxtb16 " W ", " W ", ror #8\n\t"                                                           \
    "smlad  " A ", " W ", r9, " A "\n\t"

#define LSTM_ASM_CHUNKS(NAME, CHUNK)                                                            \
    __asm__(MB_THUMB_FUNCTION_BEGIN(NAME)                                                       \
            "push   {r3, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"                             \
            "ldm    r3, {r4, r5, r6, r7}\n\t"                                                   \
            "cmp    r1, r2\n\t"                                                                 \
            "beq    .L" NAME "_done\n"                                                          \
            ".L" NAME "_chunk:\n\t"                                                             \
            "ldrd   r8, r9, [r1], #8\n\t"                                                       \
            CHUNK                                                                               \
            "cmp    r1, r2\n\t"                                                                 \
            "bne    .L" NAME "_chunk\n"                                                         \
            ".L" NAME "_done:\n\t"                                                              \
            "ldr    r3, [sp]\n\t"                                                               \
            "stm    r3, {r4, r5, r6, r7}\n\t"                                                   \
            "pop    {r3, r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t"                             \
            MB_THUMB_FUNCTION_END(NAME))

LSTM_ASM_CHUNKS("mb_lstm_dsp_chunks",
                "ldm    r0!, {r10, r11, r12, lr}\n\t"
                LSTM_ASM_ROW_S8("r10", "r4") LSTM_ASM_ROW_S8("r11", "r5")
                LSTM_ASM_ROW_S8("r12", "r6") LSTM_ASM_ROW_S8("lr", "r7"));

/* Each row's chunk is the words (w0, w2) and (w1, w3) as int16 pairs. */
LSTM_ASM_CHUNKS("mb_lstm_dsp_wide_chunks",
                "ldm    r0!, {r10, r11, r12, lr}\n\t"
                "smlad  r4, r10, r8, r4\n\t"
                "smlad  r4, r11, r9, r4\n\t"
                "smlad  r5, r12, r8, r5\n\t"
                "smlad  r5, lr, r9, r5\n\t"
                "ldm    r0!, {r10, r11, r12, lr}\n\t"
                "smlad  r6, r10, r8, r6\n\t"
                "smlad  r6, r11, r9, r6\n\t"
                "smlad  r7, r12, r8, r7\n\t"
                "smlad  r7, lr, r9, r7\n\t");

/* All the groups of one dot call in one call (dsp_wide on padded rows): per group, its four
 * sums start from bias (LDM), run the chunks as above and go to acc (STM). The group count and
 * the bias and acc pointers live on the stack (r3, then the two stack arguments): every other
 * register is the loop's. About 16 instructions a group instead of a call, its spills and the
 * bias copies. Two chunks per pass (an odd count enters at the second): 12 instructions per 16
 * MACs. groups >= 1, x_bytes > 0. */
__asm__(MB_THUMB_FUNCTION_BEGIN("mb_lstm_dsp_wide_groups")
        "push   {r3, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n"
        ".Lmb_lstm_wide_group:\n\t"
        "ldr    r3, [sp, #40]\n\t"
        "ldm    r3!, {r4, r5, r6, r7}\n\t"
        "str    r3, [sp, #40]\n\t"
        "add    r3, r1, r2\n\t"
        "tst    r2, #8\n\t"
        "bne    .Lmb_lstm_wide_second\n"
        ".Lmb_lstm_wide_pair:\n\t"
        "ldrd   r8, r9, [r1], #8\n\t"
        "ldm    r0!, {r10, r11, r12, lr}\n\t"
        "smlad  r4, r10, r8, r4\n\t"
        "smlad  r4, r11, r9, r4\n\t"
        "smlad  r5, r12, r8, r5\n\t"
        "smlad  r5, lr, r9, r5\n\t"
        "ldm    r0!, {r10, r11, r12, lr}\n\t"
        "smlad  r6, r10, r8, r6\n\t"
        "smlad  r6, r11, r9, r6\n\t"
        "smlad  r7, r12, r8, r7\n\t"
        "smlad  r7, lr, r9, r7\n\t"
".Lmb_lstm_wide_second:\n\t"
        "ldrd   r8, r9, [r1], #8\n\t"
        "ldm    r0!, {r10, r11, r12, lr}\n\t"
        "smlad  r4, r10, r8, r4\n\t"
        "smlad  r4, r11, r9, r4\n\t"
        "smlad  r5, r12, r8, r5\n\t"
        "smlad  r5, lr, r9, r5\n\t"
        "ldm    r0!, {r10, r11, r12, lr}\n\t"
        "smlad  r6, r10, r8, r6\n\t"
        "smlad  r6, r11, r9, r6\n\t"
        "smlad  r7, r12, r8, r7\n\t"
        "smlad  r7, lr, r9, r7\n\t"
        "cmp    r1, r3\n\t"
        "bne    .Lmb_lstm_wide_pair\n\t"
        "sub    r1, r1, r2\n\t"
        "ldr    r3, [sp, #44]\n\t"
        "stm    r3!, {r4, r5, r6, r7}\n\t"
        "str    r3, [sp, #44]\n\t"
        "ldr    r3, [sp]\n\t"
        "subs   r3, r3, #1\n\t"
        "str    r3, [sp]\n\t"
        "bne    .Lmb_lstm_wide_group\n\t"
        "pop    {r3, r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t"
        MB_THUMB_FUNCTION_END("mb_lstm_dsp_wide_groups"));
#else
const void *mb_lstm_dsp_chunks(const void *w, const int32_t *x, const int32_t *x_end,
                               int32_t *acc)
{
    const mb_word *q = (const mb_word *)w;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (; x != x_end; x += 2, q += 4) {
        const int32_t xe = x[0], xo = x[1];
        a0 = __smlad(mb_odd16(q[0]), xo, __smlad(mb_even16(q[0]), xe, a0));
        a1 = __smlad(mb_odd16(q[1]), xo, __smlad(mb_even16(q[1]), xe, a1));
        a2 = __smlad(mb_odd16(q[2]), xo, __smlad(mb_even16(q[2]), xe, a2));
        a3 = __smlad(mb_odd16(q[3]), xo, __smlad(mb_even16(q[3]), xe, a3));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    return q;
}

const void *mb_lstm_dsp_wide_chunks(const void *w, const int32_t *x, const int32_t *x_end,
                                    int32_t *acc)
{
    const mb_word *q = (const mb_word *)w;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (; x != x_end; x += 2, q += 8) {
        const int32_t xe = x[0], xo = x[1];
        a0 = __smlad((int32_t)q[1], xo, __smlad((int32_t)q[0], xe, a0));
        a1 = __smlad((int32_t)q[3], xo, __smlad((int32_t)q[2], xe, a1));
        a2 = __smlad((int32_t)q[5], xo, __smlad((int32_t)q[4], xe, a2));
        a3 = __smlad((int32_t)q[7], xo, __smlad((int32_t)q[6], xe, a3));
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    return q;
}

const void *mb_lstm_dsp_wide_groups(const void *w, const int32_t *x, int32_t x_bytes,
                                    int32_t groups, const int32_t *bias, int32_t *acc)
{
    const int32_t *x_end = x + x_bytes / 4;
    for (; groups > 0; groups--, bias += 4, acc += 4) {
        acc[0] = bias[0];
        acc[1] = bias[1];
        acc[2] = bias[2];
        acc[3] = bias[3];
        w = mb_lstm_dsp_wide_chunks(w, x, x_end, acc);
    }
    return w;
}
#endif

/* A group's four sums start from its four biases (four explicit copies: a loop here is what
 * compilers turn into a memcpy call, dearer than the copy). */
#define START_FROM_BIAS(acc, bias)                                                              \
    do {                                                                                        \
        (acc)[0] = (bias)[0];                                                                   \
        (acc)[1] = (bias)[1];                                                                   \
        (acc)[2] = (bias)[2];                                                                   \
        (acc)[3] = (bias)[3];                                                                   \
    } while (0)

/* acc[0..3] += four rows . the prepared vector x, on the group as arrange_rows(4, 4) stores it:
 * [cols / 4][4 rows][4 bytes], then the last cols % 4 bytes of each row, row after row. Per
 * chunk: one LDRD of the vector's pair, two of the weights, 8 SXTB16, 8 SMLAD. */
static void group_s8(const int8_t *q, int32_t cols, const int32_t *x, int32_t *acc)
{
    const int32_t full = cols & ~3;
    q = (const int8_t *)mb_lstm_dsp_chunks(q, x, x + full / 2, acc);
    const int16_t *v = (const int16_t *)(const void *)(x + full / 2);
    const int32_t tail = cols - full;
    for (int32_t c = 0; c < tail; c++) {
        const int32_t xc = v[c];
        acc[0] += q[c] * xc;
        acc[1] += q[tail + c] * xc;
        acc[2] += q[2 * tail + c] * xc;
        acc[3] += q[3 * tail + c] * xc;
    }
}

static void dot_s8_dsp(const void *m, int32_t first, int32_t cols, const void *vector, int32_t n,
                       const int32_t *bias, int32_t *acc)
{
    const int8_t *w = (const int8_t *)m + first * cols;
    const int32_t *x = (const int32_t *)vector;
    const int32_t full = cols & ~3;
    if (full == cols) { /* whole chunks only: each group ends where the next one starts */
        const void *q = w;
        for (; n >= 4; n -= 4, bias += 4, acc += 4) {
            START_FROM_BIAS(acc, bias);
            q = mb_lstm_dsp_chunks(q, x, x + full / 2, acc);
        }
        w = (const int8_t *)q;
    }
    for (; n >= 4; n -= 4, w += 4 * cols, bias += 4, acc += 4) {
        START_FROM_BIAS(acc, bias);
        group_s8(w, cols, x, acc);
    }
    const int16_t *tail = (const int16_t *)(x + full / 2);
    for (int32_t r = 0; r < n; r++) { /* the last rows of a gate (units % 4), as stored */
        const int8_t *row = w + r * cols;
        int32_t a = bias[r];
        for (int32_t c = 0; c < full; c += 4) {
            const uint32_t q = mb_load32(row + c);
            a = __smlad(mb_even16(q), x[c / 2], a);
            a = __smlad(mb_odd16(q), x[c / 2 + 1], a);
        }
        for (int32_t c = full; c < cols; c++) {
            a += row[c] * tail[c - full];
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
        const int32_t x01 = (int32_t)mb_load32(v), x23 = (int32_t)mb_load32(v + 2);
        const mb_word *qw = (const mb_word *)(const void *)q;
        const uint32_t q0 = qw[0], q1 = qw[1], q2 = qw[2], q3 = qw[3];
        a0 = __smlald(mb_even16(q0), x01, a0);
        a0 = __smlald(mb_odd16(q0), x23, a0);
        a1 = __smlald(mb_even16(q1), x01, a1);
        a1 = __smlald(mb_odd16(q1), x23, a1);
        a2 = __smlald(mb_even16(q2), x01, a2);
        a2 = __smlald(mb_odd16(q2), x23, a2);
        a3 = __smlald(mb_even16(q3), x01, a3);
        a3 = __smlald(mb_odd16(q3), x23, a3);
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

static void dot_s16_dsp(const void *m, int32_t first, int32_t cols, const void *vector,
                        int32_t n, const int64_t *bias, int64_t *acc)
{
    const int8_t *w = (const int8_t *)m + first * cols;
    const int16_t *v = (const int16_t *)vector;
    for (; n >= 4; n -= 4, w += 4 * cols, bias += 4, acc += 4) {
        START_FROM_BIAS(acc, bias);
        group_s16(w, cols, v, acc);
    }
    for (int32_t r = 0; r < n; r++) { /* the last rows, as stored */
        const int8_t *row = w + r * cols;
        int64_t a = bias[r];
        for (int32_t c = 0; c < cols; c++) {
            a += row[c] * v[c];
        }
        acc[r] = a;
    }
}

/* dsp_wide's prepare step: mb_dsp_widen_s8, with the last cols % 4 values made one more whole
 * chunk padded with zeros (the compiler pads the rows with zero weights to match), so every row
 * is whole chunks. The buffer holds it: mb_lstm_prepared_bytes(cols) is 2 x cols rounded up to
 * 8 bytes. */
static const void *widen_padded(const void *vector, int32_t cols, void *buffer)
{
    const int32_t full = cols & ~3;
    mb_dsp_widen_s8(vector, full, buffer);
    if (full != cols) {
        int8_t last[4] = {0, 0, 0, 0};
        memcpy(last, (const int8_t *)vector + full, (size_t)(cols - full));
        const uint32_t x = mb_load32(last);
        int32_t *out = (int32_t *)buffer + full / 2;
        out[0] = mb_even16(x);
        out[1] = mb_odd16(x);
    }
    return buffer;
}

/* dsp_wide on rows padded to whole chunks (lstm.py: arrange_dsp_wide of the zero-padded
 * matrix): all the groups of four rows in one call, then the units % 4 rows left over. */
static void dot_s8_dsp_wide_padded(const void *m, int32_t first, int32_t cols,
                                   const void *vector, int32_t n, const int32_t *bias,
                                   int32_t *acc)
{
    const int32_t padded = (cols + 3) & ~3;
    const int16_t *w = (const int16_t *)m + first * padded;
    const int32_t *x = (const int32_t *)vector;
    const int32_t groups = n / 4;
    if (groups > 0) {
        w = (const int16_t *)mb_lstm_dsp_wide_groups(w, x, 2 * padded, groups, bias, acc);
    }
    for (int32_t r = 4 * groups; r < n; r++) { /* the last rows, each whole chunks */
        int32_t a = bias[r];
        for (int32_t c = 0; c < padded; c += 4, w += 4) {
            int32_t w02, w13;
            memcpy(&w02, w, 4);
            memcpy(&w13, w + 2, 4);
            a = __smlad(w02, x[c / 2], a);
            a = __smlad(w13, x[c / 2 + 1], a);
        }
        acc[r] = a;
    }
}

void mb_lstm_s8_dsp(const mb_lstm_params *p, const int8_t *input, const int8_t *const weights[8],
                    const int32_t *bias, int8_t *hidden, int16_t *cell, int8_t *output,
                    void *scratch)
{
    mb_lstm_s8_with(p, input, weights, bias, hidden, cell, output, scratch,
                    mb_dsp_widen_s8, dot_s8_dsp);
}

void mb_lstm_s8_dsp_wide(const mb_lstm_params *p, const int8_t *input,
                         const int8_t *const weights[8], const int32_t *bias, int8_t *hidden,
                         int16_t *cell, int8_t *output, void *scratch)
{
    mb_lstm_s8_with(p, input, weights, bias, hidden, cell, output, scratch,
                    widen_padded, dot_s8_dsp_wide_padded);
}

void mb_lstm_s16_dsp(const mb_lstm_params *p, const int16_t *input,
                     const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                     int16_t *cell, int16_t *output, void *scratch)
{
    mb_lstm_s16_with(p, input, weights, bias, hidden, cell, output, scratch,
                     0, dot_s16_dsp);
}

#else
typedef int mb_lstm_dsp_unused;  /* ISO C wants a non-empty translation unit */
#endif
