/* UNIDIRECTIONAL_SEQUENCE_LSTM, Helium variants "mve" (int8) and "mve_s16" (16x8) for
 * Cortex-M55/M85: the reference's body (lstm.c) around row products on MVE dot products.
 *
 * Four weight rows per pass share each vector load of the input or hidden state.
 * - int8: the weights pre-arranged as FULLY_CONNECTED's mve variant has them (arrange_rows(4,
 *   16): a group of four rows 16-byte chunk by chunk, one pointer), VLDRB of 16 int8 values,
 *   VMLADAVA (16 products summed into an int32 scalar) per row: 9 instructions per 64 MACs;
 * - 16x8: weights as stored (4 row pointers), VLDRH of 8 int16 values, the rows' 8 weights
 *   widened by VLDRB.S16, VMLALDAVA into the reference's int64 sums.
 * The tail is tail-predicated (VCTP): masked lanes are neither read nor summed. Sums are exact,
 * so the order does not matter. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <stdint.h>

#include "microbuild/kernels/lstm.h"

/* acc[0..3] += four rows . v on the arranged group: [cols / 16][4 rows][16 bytes], then the
 * last cols % 16 bytes of each row, row after row. */
static void dot_s8_mve(const void *m, int32_t first, int32_t cols, const void *vector, int32_t n,
                       int32_t *acc)
{
    const int8_t *w = (const int8_t *)m + first * cols;
    const int8_t *v = (const int8_t *)vector;
    if (n == 4) {
        const int32_t chunks = cols / 16, tail = cols - chunks * 16;
        int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
        for (int32_t k = 0; k < chunks; k++, v += 16, w += 64) {
            const int8x16_t x = vldrbq_s8(v);
            a0 = vmladavaq_s8(a0, x, vldrbq_s8(w));
            a1 = vmladavaq_s8(a1, x, vldrbq_s8(w + 16));
            a2 = vmladavaq_s8(a2, x, vldrbq_s8(w + 32));
            a3 = vmladavaq_s8(a3, x, vldrbq_s8(w + 48));
        }
        if (tail > 0) {
            const mve_pred16_t p = vctp8q((uint32_t)tail);
            const int8x16_t x = vldrbq_z_s8(v, p);
            a0 = vmladavaq_p_s8(a0, x, vldrbq_z_s8(w, p), p);
            a1 = vmladavaq_p_s8(a1, x, vldrbq_z_s8(w + tail, p), p);
            a2 = vmladavaq_p_s8(a2, x, vldrbq_z_s8(w + 2 * tail, p), p);
            a3 = vmladavaq_p_s8(a3, x, vldrbq_z_s8(w + 3 * tail, p), p);
        }
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
        return;
    }
    for (int32_t r = 0; r < n; r++) { /* the last rows of a gate (units % 4), as stored */
        const int8_t *row = w + r * cols;
        int32_t a = acc[r];
        for (int32_t c = 0; c < cols; c += 16) {
            const mve_pred16_t p = vctp8q((uint32_t)(cols - c));
            a = vmladavaq_p_s8(a, vldrbq_z_s8(v + c, p), vldrbq_z_s8(row + c, p), p);
        }
        acc[r] = a;
    }
}

static void dot_s16_mve(const void *m, int32_t first, int32_t cols, const void *vector,
                        int32_t n, int64_t *acc)
{
    const int8_t *w = (const int8_t *)m + first * cols;
    const int16_t *v = (const int16_t *)vector;
    int32_t r = 0;
    if (n == 4) {
        const int8_t *w0 = w, *w1 = w + cols, *w2 = w + 2 * cols, *w3 = w + 3 * cols;
        int64_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
        for (int32_t c = 0; c < cols; c += 8) {
            const mve_pred16_t p = vctp16q((uint32_t)(cols - c));
            const int16x8_t x = vldrhq_z_s16(v + c, p);
            a0 = vmlaldavaq_p_s16(a0, x, vldrbq_z_s16(w0 + c, p), p);
            a1 = vmlaldavaq_p_s16(a1, x, vldrbq_z_s16(w1 + c, p), p);
            a2 = vmlaldavaq_p_s16(a2, x, vldrbq_z_s16(w2 + c, p), p);
            a3 = vmlaldavaq_p_s16(a3, x, vldrbq_z_s16(w3 + c, p), p);
        }
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
        r = 4;
    }
    for (; r < n; r++) {
        const int8_t *row = w + r * cols;
        int64_t a = acc[r];
        for (int32_t c = 0; c < cols; c += 8) {
            const mve_pred16_t p = vctp16q((uint32_t)(cols - c));
            a = vmlaldavaq_p_s16(a, vldrhq_z_s16(v + c, p), vldrbq_z_s16(row + c, p), p);
        }
        acc[r] = a;
    }
}

void mb_lstm_s8_mve(const mb_lstm_params *p, const int8_t *input, const int8_t *const weights[8],
                    const int32_t *bias, int8_t *hidden, int16_t *cell, int8_t *output,
                    void *scratch)
{
    mb_lstm_s8_with(p, input, weights, bias, hidden, cell, output, scratch,
                    0, dot_s8_mve);
}

void mb_lstm_s16_mve(const mb_lstm_params *p, const int16_t *input,
                     const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                     int16_t *cell, int16_t *output, void *scratch)
{
    mb_lstm_s16_with(p, input, weights, bias, hidden, cell, output, scratch,
                     0, dot_s16_mve);
}

#else
typedef int mb_lstm_mve_unused;  /* ISO C wants a non-empty translation unit */
#endif
