/* Float32 SVDF, bit-exact with TFLM's EvalFloatSvdfReference (svdf_common.cc):
 *   1. the state [batches][filters][memory] shifts left by one element (the whole buffer);
 *   2. each filter's feature dot product `dot += weights_feature * input` (from 0, inputs in
 *      order) goes to the newest column of its state row;
 *   3. each filter's time dot product `sum += weights_time * state` (from 0, oldest first) goes
 *      to the scratch;
 *   4. each unit is its bias (or 0) plus its `rank` filters' sums, added one by one;
 *   5. TFLM's ActivationValFloat (NONE, RELU, RELU6 or RELU_N1_TO_1 here).
 * The `+=` of a product is an MB_F32_MULADD, as GCC fused TFLM's (f32.h). */
#ifndef MICROBUILD_KERNELS_SVDF_F32_H
#define MICROBUILD_KERNELS_SVDF_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

#define MB_SVDF_F32_NONE 0
#define MB_SVDF_F32_RELU 1
#define MB_SVDF_F32_RELU_N1_TO_1 2
#define MB_SVDF_F32_RELU6 3

typedef struct {
    int32_t batches, input_size, filters, units, rank, memory;
    int32_t activation; /* MB_SVDF_F32_* */
} mb_svdf_f32_params;

/* bias may be NULL; scratch holds batches * filters floats. */
void mb_svdf_f32(const mb_svdf_f32_params *params, const float *input,
                 const float *weights_feature, const float *weights_time, const float *bias,
                 float *state, float *output, float *scratch);

#endif
