/* ARG_MAX / ARG_MIN along the one reduced axis of mb_reduce_params, for any element type (the
 * int8 reference kernel in reduce.c; arg_f32.c walks its own way): a value replaces the best so
 * far only when strictly greater (smaller), so the first of equal values wins, as in TFLM's
 * ArgMinMax (for float, a NaN never replaces the best, nor is replaced when it comes first). */
#ifndef MICROBUILD_KERNELS_ARG_WALK_H
#define MICROBUILD_KERNELS_ARG_WALK_H

#include "microbuild/kernels/reduce.h"

/* Defines static void NAME(const mb_reduce_params *, const T *input, int32_t *output,
 * int is_max). */
#define MB_ARG_ALONG_AXIS(NAME, T)                                                              \
    static void NAME(const mb_reduce_params *p, const T *input, int32_t *output, int is_max)   \
    {                                                                                          \
        const int32_t size = p->reduced_dims[0];                                               \
        const int32_t stride = p->reduced_strides[0];                                          \
        int32_t kept_idx[MB_REDUCE_MAX_DIMS] = {0};                                            \
        int32_t kept_offset = 0;                                                               \
        int kept_done = 0;                                                                     \
        while (!kept_done) {                                                                   \
            const T *x = input + kept_offset;                                                  \
            T best = x[0];                                                                     \
            int32_t best_index = 0;                                                            \
            if (is_max) { /* two loops, not a choice per value */                            \
                for (int32_t i = 1; i < size; i++) {                                           \
                    x += stride;                                                               \
                    if (*x > best) {                                                           \
                        best = *x;                                                             \
                        best_index = i;                                                        \
                    }                                                                          \
                }                                                                              \
            } else {                                                                           \
                for (int32_t i = 1; i < size; i++) {                                           \
                    x += stride;                                                               \
                    if (*x < best) {                                                           \
                        best = *x;                                                             \
                        best_index = i;                                                        \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
            *output++ = best_index;                                                            \
            kept_offset += mb_reduce_step(kept_idx, p->kept_dims, p->kept_strides,             \
                                          p->kept_count, &kept_done);                          \
        }                                                                                      \
    }

#endif
