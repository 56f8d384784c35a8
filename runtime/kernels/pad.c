#include "microbuild/kernels/pad.h"

#include <string.h>

/* n elements of `size` bytes, each the value at `value`. */
static void fill(uint8_t *out, int32_t n, int32_t size, const void *value)
{
    if (size == 1) {
        memset(out, *(const uint8_t *)value, (size_t)n);
    } else if (size == 2) {
        int16_t v;
        memcpy(&v, value, sizeof v);
        int16_t *o = (int16_t *)(void *)out;
        for (int32_t i = 0; i < n; i++) {
            o[i] = v;
        }
    } else {
        uint32_t v;
        memcpy(&v, value, sizeof v);
        uint32_t *o = (uint32_t *)(void *)out;
        for (int32_t i = 0; i < n; i++) {
            o[i] = v;
        }
    }
}

void mb_pad_elements(const mb_pad_s8_params *p, int32_t size, const void *value,
                     const void *input, void *output)
{
    enum { D = MB_PAD_MAX_DIMS, LAST = MB_PAD_MAX_DIMS - 1 };
    int32_t out_dims[D];
    for (int i = 0; i < D; i++) {
        out_dims[i] = p->pad_before[i] + p->input_dims[i] + p->pad_after[i];
    }
    const int32_t row = out_dims[LAST];

    /* Walk the output one innermost row at a time: a row outside the input in any outer dimension
     * is all padding; otherwise it is left padding, one input row, right padding. Input rows are
     * consumed in order, so the input is read sequentially. The compiler merged every unpadded
     * dimension into the one above it (microbuild/compiler/ops/pad.py), so rows are long and
     * the per-row bookkeeping is paid rarely. memmove, not memcpy: the output may lie over the
     * input, below it (the compiler's overlap), where a forward copy is what is needed. */
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    const int32_t before = p->pad_before[LAST] * size;
    const int32_t copied = p->input_dims[LAST] * size;
    const int32_t after = p->pad_after[LAST] * size;
    int32_t idx[D - 1] = {0, 0, 0, 0};
    for (;;) {
        int inside = 1;
        for (int i = 0; i < LAST; i++) {
            if (idx[i] < p->pad_before[i] || idx[i] >= p->pad_before[i] + p->input_dims[i]) {
                inside = 0;
            }
        }
        if (inside) {
            fill(out, p->pad_before[LAST], size, value);
            out += before;
            memmove(out, in, (size_t)copied);
            in += copied;
            out += copied;
            fill(out, p->pad_after[LAST], size, value);
            out += after;
        } else {
            fill(out, row, size, value);
            out += row * size;
        }
        /* Advance the outer index like an odometer, last outer dimension fastest. */
        int i = LAST - 1;
        while (i >= 0 && ++idx[i] == out_dims[i]) {
            idx[i] = 0;
            i--;
        }
        if (i < 0) {
            break;
        }
    }
}

void mb_pad_s8(const mb_pad_s8_params *p, const int8_t *input, int8_t *output)
{
    const int8_t value = (int8_t)p->pad_value;
    mb_pad_elements(p, 1, &value, input, output);
}

void mb_pad_s16(const mb_pad_s8_params *p, const int16_t *input, int16_t *output)
{
    const int16_t value = (int16_t)p->pad_value;
    mb_pad_elements(p, 2, &value, input, output);
}
