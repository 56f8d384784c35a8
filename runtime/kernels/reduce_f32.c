#include "microbuild/kernels/reduce_f32.h"

/* One output: the reducer over the reduced group at kept_offset, in row-major order. */
static float reduce_group(const mb_reduce_params *p, int32_t operation, const float *input)
{
    int32_t idx[MB_REDUCE_MAX_DIMS] = {0};
    int32_t offset = 0;
    int done = 0;
    int32_t count = 0;
    float acc = operation == MB_F32_REDUCE_MAX   ? -FLT_MAX /* numeric_limits::lowest() */
                : operation == MB_F32_REDUCE_MIN ? FLT_MAX
                                                 : 0.0f;
    while (!done) {
        const float v = input[offset];
        switch (operation) {
        case MB_F32_REDUCE_MAX:
            acc = v > acc ? v : acc;
            break;
        case MB_F32_REDUCE_MIN:
            acc = v < acc ? v : acc;
            break;
        default:
            acc = v + acc;
            break;
        }
        count++;
        offset += mb_reduce_step(idx, p->reduced_dims, p->reduced_strides, p->reduced_count,
                                 &done);
    }
    /* TFLM's Mean: the float sum divided by the element count converted to float. */
    return operation == MB_F32_REDUCE_MEAN ? acc / (float)count : acc;
}

void mb_reduce_f32(const mb_reduce_params *params, int32_t operation, const float *input,
                   float *output)
{
    int32_t kept_idx[MB_REDUCE_MAX_DIMS] = {0};
    int32_t kept_offset = 0;
    int kept_done = 0;
    while (!kept_done) {
        *output++ = reduce_group(params, operation, input + kept_offset);
        kept_offset += mb_reduce_step(kept_idx, params->kept_dims, params->kept_strides,
                                      params->kept_count, &kept_done);
    }
}
