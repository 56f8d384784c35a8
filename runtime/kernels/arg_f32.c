#include "microbuild/kernels/arg_f32.h"
#include "microbuild/kernels/arg_walk.h"

MB_ARG_ALONG_AXIS(arg_f32, float)

void mb_arg_max_f32(const mb_reduce_params *params, const float *input, int32_t *output)
{
    arg_f32(params, input, output, 1);
}

void mb_arg_min_f32(const mb_reduce_params *params, const float *input, int32_t *output)
{
    arg_f32(params, input, output, 0);
}
