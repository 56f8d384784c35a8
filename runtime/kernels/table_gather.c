#include "microbuild/kernels/table_gather.h"

#include "microbuild/kernels/copy_bytes.h"

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
    /* The innermost dimension is a plain loop over its table; the odometer turns once per row.
     * Units are one pixel's channels, a few bytes to a few dozen. */
    const int32_t *inner = table[last];
    const int32_t row = p->output_dims[last];
    for (;;) {
        const unsigned char *base = in + partial[last];
        for (int32_t o = 0; o < row; o++) {
            mb_copy_bytes_forward(out, base + inner[o], unit);
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
