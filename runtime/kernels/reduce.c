#include "microbuild/kernels/reduce.h"

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

/* ARG_MAX (is_max) or ARG_MIN along the one reduced axis: a value replaces the best so far only
 * when strictly greater (smaller), so the first of equal values wins. */
static void arg_s8(const mb_reduce_params *p, const int8_t *input, int32_t *output, int is_max)
{
    const int32_t size = p->reduced_dims[0];
    const int32_t stride = p->reduced_strides[0];
    int32_t kept_idx[MB_REDUCE_MAX_DIMS] = {0};
    int32_t kept_offset = 0;
    int kept_done = 0;
    while (!kept_done) {
        const int8_t *x = input + kept_offset;
        int8_t best = x[0];
        int32_t best_index = 0;
        for (int32_t i = 1; i < size; i++) {
            const int8_t v = x[i * stride];
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
