#include "microbuild/kernels/transpose.h"

#include <stddef.h>
#include "microbuild/kernels/copy_bytes.h"

/* The compiler has merged every pair of output dimensions that walks the input as one
 * (microbuild/compiler/ops/transpose.py, merged_dims), so the innermost dimension is either a run
 * of contiguous input elements (step 1: DEPTH_TO_SPACE's block * C, a transpose that keeps the
 * last axis), moved in the widest aligned units, or a strided gather (NHWC -> NCHW). The two
 * innermost dimensions are walked by plain loops; the odometer only turns once per block of
 * rows, and no index is computed per element. */

/* `rows` output rows of `row` values of type T, each a gather with input step `step` (1 for a
 * contiguous run), the rows `row_step` values apart in the input. Returns the output after
 * them. */
#define MB_DEFINE_GATHER_ROWS(T)                                                                 \
    static T *gather_rows_##T(T *dst, const T *src, int32_t rows, int32_t row_step, int32_t row, \
                              int32_t step)                                                     \
    {                                                                                           \
        for (int32_t r = 0; r < rows; r++) {                                                    \
            const T *s = src + (ptrdiff_t)r * row_step;                                         \
            if (step == 1) { /* a run: one index for both sides */                              \
                for (int32_t i = 0; i < row; i++) {                                             \
                    dst[i] = s[i];                                                              \
                }                                                                               \
                dst += row;                                                                     \
                continue;                                                                       \
            }                                                                                   \
            for (int32_t i = 0; i < row; i++) {                                                 \
                *dst++ = *s;                                                                    \
                s += step;                                                                      \
            }                                                                                   \
        }                                                                                       \
        return dst;                                                                             \
    }
MB_DEFINE_GATHER_ROWS(int8_t)
MB_DEFINE_GATHER_ROWS(int16_t)
MB_DEFINE_GATHER_ROWS(int32_t)

/* The widest of 4, 2 and 1 bytes that divides `bits` (addresses, lengths and steps OR-ed). */
static int32_t widest_unit(uint32_t bits)
{
    return (bits & 3u) == 0 ? 4 : (bits & 1u) == 0 ? 2 : 1;
}

void mb_transpose(const mb_transpose_params *p, const void *input, void *output)
{
    const int32_t last = p->num_dims - 1;
    const int32_t size = p->element_size;
    /* The dimension above the rows; a lone dimension is one row. */
    const int32_t rows = last >= 1 ? p->output_dims[last - 1] : 1;
    const int32_t row_bytes_step = last >= 1 ? p->input_strides[last - 1] * size : 0;
    const int32_t outer = last - 2; /* the odometer's innermost dimension, -1 for none */
    /* A row is moved in units of `unit` bytes: its elements when they are strided, else the widest
     * of 4, 2 and 1 bytes that keeps every run aligned (a run of block * C int8 values of a
     * DEPTH_TO_SPACE moves a word or a halfword at a time). */
    int32_t unit = size;
    int32_t row = p->output_dims[last];
    int32_t step = p->input_strides[last];
    if (step == 1) {
        uint32_t bits = (uint32_t)(uintptr_t)input | (uint32_t)(uintptr_t)output |
                        (uint32_t)(row * size);
        for (int32_t d = 0; d < last; d++) {
            bits |= (uint32_t)(p->input_strides[d] * size);
        }
        unit = widest_unit(bits);
        row = row * size / unit;
    }
    const int32_t row_step = row_bytes_step / unit;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    int32_t index[MB_TRANSPOSE_MAX_DIMS] = {0};
    int32_t offset = 0; /* in input elements */
    for (;;) {
        const uint8_t *src = in + (ptrdiff_t)offset * size;
        if (unit == 1 && step == 1 && row >= 4) {
            /* Runs of 4 bytes or more at no common alignment (SPACE_TO_DEPTH's block * C = 15
             * int8 values): a word at a time. */
            for (int32_t r = 0; r < rows; r++) {
                mb_copy_bytes_forward(out, src + (ptrdiff_t)r * row_step, row);
                out += row;
            }
        } else if (unit == 1) {
            out = (uint8_t *)gather_rows_int8_t((int8_t *)out, (const int8_t *)src, rows,
                                                row_step, row, step);
        } else if (unit == 2) {
            out = (uint8_t *)(void *)gather_rows_int16_t((int16_t *)(void *)out,
                                                         (const int16_t *)(const void *)src,
                                                         rows, row_step, row, step);
        } else {
            out = (uint8_t *)(void *)gather_rows_int32_t((int32_t *)(void *)out,
                                                         (const int32_t *)(const void *)src,
                                                         rows, row_step, row, step);
        }
        /* Advance the outer output index like an odometer, keeping the input offset in step. */
        int32_t d = outer;
        while (d >= 0) {
            index[d]++;
            offset += p->input_strides[d];
            if (index[d] < p->output_dims[d]) {
                break;
            }
            offset -= p->input_strides[d] * p->output_dims[d];
            index[d] = 0;
            d--;
        }
        if (d < 0) {
            return;
        }
    }
}
