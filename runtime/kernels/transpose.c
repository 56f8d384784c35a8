#include "microbuild/kernels/transpose.h"

#include <stddef.h>

/* The compiler has merged every pair of output dimensions that walks the input as one
 * (microbuild/compiler/ops/transpose.py, merged_dims), so the innermost dimension is either a run
 * of contiguous input elements (step 1: DEPTH_TO_SPACE's block * C, a transpose that keeps the
 * last axis) or a strided gather (NHWC -> NCHW). The two innermost dimensions are walked by plain
 * loops; the odometer only turns once per block of rows, and no index is computed per element. */

/* `rows` runs of `bytes` contiguous bytes, the runs `run_step` bytes apart in the input, 4 bytes
 * at a time when every run starts word aligned on both sides (runs are a few bytes to a few dozen,
 * shorter than a library memcpy's set-up pays for). Returns the output after them. */
static uint8_t *copy_runs(uint8_t *dst, const uint8_t *src, int32_t rows, int32_t run_step,
                          int32_t bytes, int words)
{
    for (int32_t r = 0; r < rows; r++) {
        const uint8_t *s = src + (ptrdiff_t)r * run_step;
        if (words) {
            uint32_t *d32 = (uint32_t *)(void *)dst;
            const uint32_t *s32 = (const uint32_t *)(const void *)s;
            for (int32_t i = 0; i < bytes / 4; i++) {
                d32[i] = s32[i];
            }
        } else {
            for (int32_t i = 0; i < bytes; i++) {
                dst[i] = s[i];
            }
        }
        dst += bytes;
    }
    return dst;
}

/* `rows` output rows of `row` elements of type T, each a gather with input step `step`, the rows
 * `row_step` input elements apart. Returns the output after them. */
#define MB_DEFINE_GATHER_ROWS(T)                                                                 \
    static T *gather_rows_##T(T *dst, const T *src, int32_t rows, int32_t row_step, int32_t row, \
                              int32_t step)                                                     \
    {                                                                                           \
        for (int32_t r = 0; r < rows; r++) {                                                    \
            const T *s = src + (ptrdiff_t)r * row_step;                                         \
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

void mb_transpose(const mb_transpose_params *p, const void *input, void *output)
{
    const int32_t last = p->num_dims - 1;
    const int32_t size = p->element_size;
    const int32_t row = p->output_dims[last];
    const int32_t step = p->input_strides[last];
    /* The dimension above the rows; a lone dimension is one row. */
    const int32_t rows = last >= 1 ? p->output_dims[last - 1] : 1;
    const int32_t row_step = last >= 1 ? p->input_strides[last - 1] : 0;
    const int32_t outer = last - 2; /* the odometer's innermost dimension, -1 for none */
    const int32_t run_bytes = row * size;
    /* Word copies when the tensors, the run length and every input step keep runs aligned. */
    uint32_t misaligned = (uint32_t)(uintptr_t)input | (uint32_t)(uintptr_t)output |
                          (uint32_t)run_bytes;
    for (int32_t d = 0; d < last; d++) {
        misaligned |= (uint32_t)(p->input_strides[d] * size);
    }
    const int words = (misaligned & 3u) == 0;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    int32_t index[MB_TRANSPOSE_MAX_DIMS] = {0};
    int32_t offset = 0; /* in input elements */
    for (;;) {
        const uint8_t *src = in + (ptrdiff_t)offset * size;
        if (step == 1) {
            out = copy_runs(out, src, rows, row_step * size, run_bytes, words);
        } else if (size == 1) {
            out = (uint8_t *)gather_rows_int8_t((int8_t *)out, (const int8_t *)src, rows,
                                                row_step, row, step);
        } else if (size == 2) {
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
