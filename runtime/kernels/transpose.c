#include "microbuild/kernels/transpose.h"

/* Copy the innermost output dimension as a strided gather, for one element type. */
#define MB_GATHER_ROW(T)                                                                         \
    do {                                                                                        \
        const T *src = (const T *)input + offset;                                               \
        T *dst = (T *)output + written;                                                         \
        for (int32_t i = 0; i < row; i++) {                                                     \
            dst[i] = src[i * step];                                                             \
        }                                                                                       \
    } while (0)

void mb_transpose(const mb_transpose_params *p, const void *input, void *output)
{
    const int32_t last = p->num_dims - 1;
    const int32_t row = p->output_dims[last];
    const int32_t step = p->input_strides[last];
    int32_t index[MB_TRANSPOSE_MAX_DIMS] = {0};
    int32_t offset = 0;  /* in input elements */
    int32_t written = 0; /* in output elements */
    for (;;) {
        if (p->element_size == 1) {
            MB_GATHER_ROW(int8_t);
        } else if (p->element_size == 2) {
            MB_GATHER_ROW(int16_t);
        } else {
            MB_GATHER_ROW(int32_t);
        }
        written += row;
        /* Advance the outer output index like an odometer, keeping the input offset in step. */
        int32_t d = last - 1;
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
