/* Float32 RESIZE_BILINEAR, bit-exact with TFLM's reference_ops::ResizeBilinear on float.
 *
 * Per output row and column, TFLM's ComputeInterpolationValues: the input position
 * `value * scale` (with half-pixel centres `(value + 0.5f) * scale - 0.5f`, which GCC fused into
 * one VFMS on the FPU cores: MB_F32_MULADD), its floor clamped to >= 0 and its ceiling to the last
 * input pixel. Per channel the four corners weighted as TFLM writes it,
 *     ((in00 * wy0 * wx0 + in10 * wy1 * wx0) + in01 * wy0 * wx1) + in11 * wy1 * wx1 + 0.0f,
 * with each `+ corner * weight` after the first fused where GCC fused it (f32.h). */
#ifndef MICROBUILD_KERNELS_RESIZE_F32_H
#define MICROBUILD_KERNELS_RESIZE_F32_H

#include <stdint.h>

#include "microbuild/kernels/f32.h"

typedef struct {
    int32_t batches;
    int32_t input_h, input_w, channels;
    int32_t output_h, output_w;
    float height_scale, width_scale; /* as TFLM's Prepare: in / out, or (in - 1) / (out - 1) */
    int32_t half_pixel_centers;
} mb_resize_bilinear_f32_params;

void mb_resize_bilinear_f32(const mb_resize_bilinear_f32_params *params, const float *input,
                            float *output);

#endif
