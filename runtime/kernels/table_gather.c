#include "microbuild/kernels/table_gather.h"

#include <string.h>

/* `bytes` bytes, 4 at a time through memcpy (one load and store, unaligned where the core allows
 * it: Cortex-M3 and up; byte moves where it does not), then the odd bytes. Units are the channels
 * of a pixel: a few bytes to a few dozen. */
static void copy_unit(unsigned char *dst, const unsigned char *src, int32_t bytes)
{
    int32_t i = 0;
    for (; i + 4 <= bytes; i += 4) {
        uint32_t word;
        memcpy(&word, src + i, 4);
        memcpy(dst + i, &word, 4);
    }
    for (; i < bytes; i++) {
        dst[i] = src[i];
    }
}

void mb_table_gather(const mb_table_gather_params *p, const int32_t *offsets, const void *input,
                     void *output)
{
    const unsigned char *in = (const unsigned char *)input;
    unsigned char *out = (unsigned char *)output;
    const int32_t last = p->num_dims - 1;
    const int32_t unit = p->unit_bytes;
    const int32_t *table[MB_TABLE_GATHER_MAX_DIMS];
    int32_t index[MB_TABLE_GATHER_MAX_DIMS];
    /* partial[d]: the sum of the terms of dimensions 0 .. d-1 at the current index. */
    int32_t partial[MB_TABLE_GATHER_MAX_DIMS + 1];
    const int32_t *t = offsets;
    partial[0] = 0;
    for (int32_t d = 0; d <= last; d++) {
        table[d] = t;
        t += p->output_dims[d];
        index[d] = 0;
        partial[d + 1] = partial[d] + table[d][0];
    }
    /* The innermost dimension is a plain loop over its table; the odometer turns once per row. */
    const int32_t *inner = table[last];
    const int32_t row = p->output_dims[last];
    for (;;) {
        const unsigned char *base = in + partial[last];
        for (int32_t o = 0; o < row; o++) {
            copy_unit(out, base + inner[o], unit);
            out += unit;
        }
        /* Advance the outer output index like an odometer and recompute the partial sums from
         * the dimension that moved. */
        int32_t d = last - 1;
        while (d >= 0 && ++index[d] == p->output_dims[d]) {
            index[d] = 0;
            d--;
        }
        if (d < 0) {
            return;
        }
        for (int32_t k = d; k < last; k++) {
            partial[k + 1] = partial[k] + table[k][index[k]];
        }
    }
}
