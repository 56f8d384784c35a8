#include "microbuild/kernels/pad.h"

#include "microbuild/kernels/copy_bytes.h"

/* Rows are short (often a few dozen bytes): library memset/memmove calls cost more than the
 * bytes, so the copies and fills are copy_bytes.h's. */

/* The walk's constants: the output block sizes per dimension in bytes, and the pattern. */
typedef struct {
    const mb_pad_s8_params *p;
    int32_t block[MB_PAD_MAX_DIMS];  /* bytes of one index of dimension d in the output */
    int32_t size;
    uint8_t pattern[4];
} pad_walk;

/* Dimension d of the output, from `out`, consuming input from `*in`; returns the output end.
 * An index outside the input in dimension d is a whole block of padding (one fill, however
 * many inner dimensions it spans); the last dimension is left padding, one input row, right
 * padding. Input rows are consumed in order, so the input is read sequentially, and the output
 * is written in order. */
static uint8_t *pad_dim(const pad_walk *w, int d, const uint8_t **in, uint8_t *out)
{
    const mb_pad_s8_params *p = w->p;
    if (d == MB_PAD_MAX_DIMS - 1) {
        const int32_t before = p->pad_before[d] * w->size;
        const int32_t copied = p->input_dims[d] * w->size;
        mb_fill_bytes(out, before, w->pattern);
        out += before;
        mb_copy_bytes_forward(out, *in, copied); /* forward: the output may lie below */
        *in += copied;
        out += copied;
        mb_fill_bytes(out, p->pad_after[d] * w->size, w->pattern);
        return out + p->pad_after[d] * w->size;
    }
    const int32_t before = p->pad_before[d] * w->block[d];
    mb_fill_bytes(out, before, w->pattern);
    out += before;
    for (int32_t i = 0; i < p->input_dims[d]; i++) {
        out = pad_dim(w, d + 1, in, out);
    }
    const int32_t after = p->pad_after[d] * w->block[d];
    mb_fill_bytes(out, after, w->pattern);
    return out + after;
}

void mb_pad_elements(const mb_pad_s8_params *p, int32_t size, const void *value,
                     const void *input, void *output)
{
    /* The compiler merged every unpadded dimension into the one above it
     * (microbuild/compiler/ops/pad.py), so rows are long and there are few of them. */
    pad_walk w;
    w.p = p;
    w.size = size;
    for (int32_t i = 0; i < 4; i++) {
        w.pattern[i] = ((const uint8_t *)value)[i % size];
    }
    int32_t bytes = size;
    for (int d = MB_PAD_MAX_DIMS - 1; d >= 0; d--) {
        w.block[d] = bytes;
        bytes *= p->pad_before[d] + p->input_dims[d] + p->pad_after[d];
    }
    /* Leading size-1, unpadded dimensions (the left-extension to five) need no walking. */
    int d = 0;
    while (d < MB_PAD_MAX_DIMS - 1 && p->input_dims[d] == 1 && p->pad_before[d] == 0 &&
           p->pad_after[d] == 0) {
        d++;
    }
    const uint8_t *in = (const uint8_t *)input;
    pad_dim(&w, d, &in, (uint8_t *)output);
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
