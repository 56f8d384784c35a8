/* Helium (MVE-F, Cortex-M55/M85) variants of the float32 FULLY_CONNECTED and CONV_2D kernels.
 *
 * NOT bit-exact with TFLM. Each output's sum runs in four float lanes: lane k accumulates the
 * products of depth positions k, k + 4, k + 8, ... with VFMA, and the four partial sums are added
 * at the end as (lane0 + lane1) + (lane2 + lane3), then the bias. TFLM adds the products one after
 * the other in depth order, so the rounding differs by a few ULPs of the sum. The compiler never
 * picks these by default: only with --allow-float-reorder (KernelVariant.reorders_float_sums),
 * and then `compile`/`build` report the largest difference measured on the model.
 *
 * Same arguments as the exact kernels (fully_connected_f32.h, spatial_f32.h), then the variant's
 * scratch pointer (unused). Weights as the model stores them. */
#ifndef MICROBUILD_KERNELS_F32_MVE_H
#define MICROBUILD_KERNELS_F32_MVE_H

#include "microbuild/kernels/fully_connected_f32.h"
#include "microbuild/kernels/spatial_f32.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#include <arm_mve.h>

/* The four lanes' partial sums added in the one order both kernels use. */
static inline float mb_f32_mve_lanes_sum(float32x4_t v)
{
    return (vgetq_lane_f32(v, 0) + vgetq_lane_f32(v, 1)) +
           (vgetq_lane_f32(v, 2) + vgetq_lane_f32(v, 3));
}
#endif

void mb_fully_connected_f32_mve(const mb_fully_connected_f32_params *params, const float *input,
                                const float *weights, const float *bias, float *output,
                                void *scratch);

/* CONV_2D: the sum over each valid tap's filter_c channels runs in the four lanes (the lanes'
 * partial sums carry over from tap to tap), four output channels of a group at a time. */
void mb_conv2d_f32_mve(const mb_spatial_f32_params *params, const float *input,
                       const float *filter, const float *bias, float *output, void *scratch);

#endif
