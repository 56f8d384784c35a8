#include "microbuild/kernels/gather_nd.h"

#include <string.h>

int32_t mb_gather_nd(const mb_gather_nd_params *p, const void *input, const int32_t *indices,
                     void *output)
{
    const size_t slice_bytes = (size_t)p->slice_size * (size_t)p->element_size;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    for (int32_t i = 0; i < p->num_slices; i++) {
        const int32_t *row = indices + (size_t)i * (size_t)p->index_depth;
        /* In 64 bits: an int32 index times a stride must not wrap before the check. */
        int64_t from = 0;
        for (int32_t j = 0; j < p->index_depth; j++) {
            from += (int64_t)row[j] * p->dim_strides[j];
        }
        if (from < 0 || from + p->slice_size > p->input_size) {
            return -1;
        }
        memcpy(out, in + (size_t)from * (size_t)p->element_size, slice_bytes);
        out += slice_bytes;
    }
    return 0;
}
