#include "microbuild/kernels/reduce.h"
#include "microbuild/kernels/arg_walk.h"

int32_t mb_reduce_step(int32_t *idx, const int32_t *dims, const int32_t *strides, int32_t count,
                       int *done)
{
    int32_t delta = 0;
    for (int32_t i = count - 1; i >= 0; i--) {
        idx[i]++;
        delta += strides[i];
        if (idx[i] < dims[i]) {
            return delta;
        }
        delta -= idx[i] * strides[i];
        idx[i] = 0;
    }
    *done = 1;
    return delta;
}

/* REDUCE_MAX (is_max) or REDUCE_MIN over the reduced group of every kept position. */
static void extreme_s8(const mb_reduce_params *p, const int8_t *input, int8_t *output, int is_max)
{
    int32_t kept_idx[MB_REDUCE_MAX_DIMS] = {0};
    int32_t kept_offset = 0;
    int kept_done = 0;
    while (!kept_done) {
        int32_t reduced_idx[MB_REDUCE_MAX_DIMS] = {0};
        int32_t offset = 0;
        int reduced_done = 0;
        int8_t best = input[kept_offset];
        while (!reduced_done) {
            const int8_t v = input[kept_offset + offset];
            if (is_max ? v > best : v < best) {
                best = v;
            }
            offset += mb_reduce_step(reduced_idx, p->reduced_dims, p->reduced_strides,
                                     p->reduced_count, &reduced_done);
        }
        *output++ = best;
        kept_offset += mb_reduce_step(kept_idx, p->kept_dims, p->kept_strides, p->kept_count,
                                      &kept_done);
    }
}

MB_ARG_ALONG_AXIS(arg_s8, int8_t)

void mb_reduce_max_s8(const mb_reduce_params *params, const int8_t *input, int8_t *output)
{
    extreme_s8(params, input, output, 1);
}

void mb_reduce_min_s8(const mb_reduce_params *params, const int8_t *input, int8_t *output)
{
    extreme_s8(params, input, output, 0);
}

void mb_arg_max_s8(const mb_reduce_params *params, const int8_t *input, int32_t *output)
{
    arg_s8(params, input, output, 1);
}

void mb_arg_min_s8(const mb_reduce_params *params, const int8_t *input, int32_t *output)
{
    arg_s8(params, input, output, 0);
}
