#include "microbuild/kernels/arg_f32.h"

static void arg_f32(const mb_reduce_params *p, const float *input, int32_t *output, int is_max)
{
    const int32_t size = p->reduced_dims[0];
    const int32_t stride = p->reduced_strides[0];
    int32_t kept_idx[MB_REDUCE_MAX_DIMS] = {0};
    int32_t kept_offset = 0;
    int kept_done = 0;
    while (!kept_done) {
        const float *x = input + kept_offset;
        float best = x[0];
        int32_t best_index = 0;
        for (int32_t i = 1; i < size; i++) {
            const float v = x[i * stride];
            if (is_max ? v > best : v < best) {
                best = v;
                best_index = i;
            }
        }
        *output++ = best_index;
        kept_offset += mb_reduce_step(kept_idx, p->kept_dims, p->kept_strides, p->kept_count,
                                      &kept_done);
    }
}

void mb_arg_max_f32(const mb_reduce_params *params, const float *input, int32_t *output)
{
    arg_f32(params, input, output, 1);
}

void mb_arg_min_f32(const mb_reduce_params *params, const float *input, int32_t *output)
{
    arg_f32(params, input, output, 0);
}
