#include "microbuild/kernels/pad_f32.h"

/* Walks the output in order; an element inside the input's box is the next input element. */
void mb_pad_f32(const mb_pad_s8_params *p, float pad_value, const float *input, float *output)
{
    int32_t out_dims[MB_PAD_MAX_DIMS];
    for (int32_t d = 0; d < MB_PAD_MAX_DIMS; d++) {
        out_dims[d] = p->pad_before[d] + p->input_dims[d] + p->pad_after[d];
    }
    int32_t i[MB_PAD_MAX_DIMS];
    for (i[0] = 0; i[0] < out_dims[0]; i[0]++) {
        for (i[1] = 0; i[1] < out_dims[1]; i[1]++) {
            for (i[2] = 0; i[2] < out_dims[2]; i[2]++) {
                for (i[3] = 0; i[3] < out_dims[3]; i[3]++) {
                    for (i[4] = 0; i[4] < out_dims[4]; i[4]++) {
                        int32_t inside = 1;
                        for (int32_t d = 0; d < MB_PAD_MAX_DIMS; d++) {
                            inside &= i[d] >= p->pad_before[d] &&
                                      i[d] < p->pad_before[d] + p->input_dims[d];
                        }
                        *output++ = inside ? *input++ : pad_value;
                    }
                }
            }
        }
    }
}
