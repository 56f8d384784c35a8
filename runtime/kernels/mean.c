#include "microbuild/kernels/mean.h"

#include "microbuild/kernels/reduce.h"
#include "microbuild/quant.h"

/* One loop for int8 and int16 (16x8 models): NAME, the element type T, its range [LO, HI]. */
#define MB_MEAN_KERNEL(NAME, T, LO, HI)                                                            \
void NAME(const mb_mean_s8_params *p, const T *input, T *output)                                   \
{                                                                                                  \
    int32_t kept_idx[MB_MEAN_MAX_DIMS] = {0};                                                      \
    int32_t kept_offset = 0;                                                                       \
    T *out = output;                                                                               \
    int kept_done = 0;                                                                             \
                                                                                                   \
    while (!kept_done) {                                                                           \
        int32_t reduced_idx[MB_MEAN_MAX_DIMS] = {0};                                               \
        int32_t offset = 0;                                                                        \
        int32_t sum = 0;                                                                           \
        int reduced_done = 0;                                                                      \
        while (!reduced_done) {                                                                    \
            sum += input[kept_offset + offset];                                                    \
            offset += mb_reduce_step(reduced_idx, p->reduced_dims, p->reduced_strides,            \
                                     p->reduced_count, &reduced_done);                             \
        }                                                                                          \
        const int32_t mean = mb_mul_by_quantized_multiplier(sum - p->input_zero_point_sum,         \
                                                            p->multiplier, (int)p->shift);         \
        *out++ = (T)mb_clamp_i32(mean + p->output_offset, LO, HI);                                 \
        kept_offset += mb_reduce_step(kept_idx, p->kept_dims, p->kept_strides, p->kept_count,     \
                                      &kept_done);                                                 \
    }                                                                                              \
}

MB_MEAN_KERNEL(mb_mean_s8, int8_t, INT8_MIN, INT8_MAX)
MB_MEAN_KERNEL(mb_mean_s16, int16_t, INT16_MIN, INT16_MAX)
