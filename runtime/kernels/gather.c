#include "microbuild/kernels/gather.h"

#include "microbuild/kernels/copy_bytes.h"

int32_t mb_gather(const mb_gather_params *p, const void *input, const int32_t *indices,
                  void *output)
{
    const size_t slice = (size_t)p->inner_size * (size_t)p->element_size;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    for (int32_t b = 0; b < p->batch_size; b++) {
        const int32_t *coords = indices + (size_t)b * (size_t)p->coord_size;
        for (int32_t o = 0; o < p->outer_size; o++) {
            const int32_t block = b * p->outer_size + o;
            const uint8_t *src = in + (size_t)block * (size_t)p->axis_size * slice;
            for (int32_t c = 0; c < p->coord_size; c++) {
                const int32_t k = coords[c];
                if (k < 0 || k >= p->axis_size) {
                    return -1;
                }
                /* Slices are often one value (a gather on the last axis): no library call. */
                mb_copy_bytes_forward(out, src + (size_t)k * slice, (int32_t)slice);
                out += slice;
            }
        }
    }
    return 0;
}
