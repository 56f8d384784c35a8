#include "microbuild/kernels/dynamic_update_slice.h"

#include <string.h>

void mb_dynamic_update_slice(const mb_dynamic_update_slice_params *p, const void *operand,
                             const void *update, const void *start, void *output)
{
    mb_strided_copy_params copy;
    int32_t operand_size = 1;
    int32_t update_size = 1;
    int32_t d;
    memset(&copy, 0, sizeof copy);
    for (d = p->rank - 1; d >= 0; d--) {
        copy.counts[d] = p->update_dims[d];
        copy.src_steps[d] = update_size;
        copy.dst_steps[d] = operand_size;
        update_size *= p->update_dims[d];
        operand_size *= p->operand_dims[d];
    }
    if (output != operand) {
        memcpy(output, operand, (size_t)operand_size * (size_t)p->element_size);
    }
    copy.num_dims = p->rank;
    copy.element_size = p->element_size;
    copy.src_offset = 0;
    copy.dst_offset = 0;
    for (d = 0; d < p->rank; d++) {
        /* TFLM clamps in 64 bits: an int32 index near the limits must not wrap. */
        int64_t index = p->start_is_int64 ? ((const int64_t *)start)[d]
                                          : (int64_t)((const int32_t *)start)[d];
        const int64_t last = (int64_t)p->operand_dims[d] - p->update_dims[d];
        if (index < 0) {
            index = 0;
        } else if (index > last) {
            index = last;
        }
        copy.dst_offset += (int32_t)index * copy.dst_steps[d];
    }
    if (update_size > 0) {
        mb_strided_copy(&copy, update, output);
    }
}
