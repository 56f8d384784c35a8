#include "microbuild/kernels/table_gather.h"

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
    for (;;) {
        const unsigned char *src = in + partial[last + 1];
        for (int32_t i = 0; i < unit; i++) {
            out[i] = src[i];
        }
        out += unit;
        /* Advance the output index like an odometer, last dimension fastest, and recompute the
         * partial sums from the dimension that moved. */
        int32_t d = last;
        while (d >= 0 && ++index[d] == p->output_dims[d]) {
            index[d] = 0;
            d--;
        }
        if (d < 0) {
            return;
        }
        for (int32_t k = d; k <= last; k++) {
            partial[k + 1] = partial[k] + table[k][index[k]];
        }
    }
}
