#include "microbuild/kernels/strided_copy.h"

#include <string.h>

/* One innermost row of `row` elements of type T. */
#define MB_COPY_ROW(T)                                                                           \
    do {                                                                                        \
        const T *s = (const T *)input + src;                                                    \
        T *d = (T *)output + dst;                                                               \
        for (int32_t i = 0; i < row; i++) {                                                     \
            d[i * dst_step] = s[i * src_step];                                                  \
        }                                                                                       \
    } while (0)

void mb_strided_copy(const mb_strided_copy_params *p, const void *input, void *output)
{
    const int32_t last = p->num_dims - 1;
    const int32_t row = p->counts[last];
    const int32_t src_step = p->src_steps[last];
    const int32_t dst_step = p->dst_steps[last];
    const int contiguous = src_step == 1 && dst_step == 1;
    int32_t index[MB_STRIDED_COPY_MAX_DIMS] = {0};
    int32_t src = p->src_offset; /* in elements */
    int32_t dst = p->dst_offset;
    for (int32_t d = 0; d <= last; d++) {
        if (p->counts[d] <= 0) {
            return; /* nothing to copy */
        }
    }
    for (;;) {
        if (contiguous) {
            memcpy((uint8_t *)output + (size_t)dst * (size_t)p->element_size,
                   (const uint8_t *)input + (size_t)src * (size_t)p->element_size,
                   (size_t)row * (size_t)p->element_size);
        } else if (p->element_size == 1) {
            MB_COPY_ROW(int8_t);
        } else if (p->element_size == 2) {
            MB_COPY_ROW(int16_t);
        } else if (p->element_size == 4) {
            MB_COPY_ROW(int32_t);
        } else {
            MB_COPY_ROW(int64_t);
        }
        /* Advance the outer dimensions like an odometer, both offsets in step. */
        int32_t d = last - 1;
        while (d >= 0) {
            index[d]++;
            src += p->src_steps[d];
            dst += p->dst_steps[d];
            if (index[d] < p->counts[d]) {
                break;
            }
            src -= p->src_steps[d] * p->counts[d];
            dst -= p->dst_steps[d] * p->counts[d];
            index[d] = 0;
            d--;
        }
        if (d < 0) {
            return;
        }
    }
}
