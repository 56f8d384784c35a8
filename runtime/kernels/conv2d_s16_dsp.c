/* CONV_2D with 16-bit activations (16x8), Arm DSP variant "dsp_s16" (Cortex-M4/M7/M33/M55): for
 * each output pixel, the window's int16 taps are gathered into a column in scratch (taps in the
 * padding hold 0, the int16 zero point, so they add nothing as the reference skips them), then
 * every output channel is the 16x8 fully-connected dot product of that column with the channel's
 * filter row: mb_fully_connected_s16_dsp (SMLALD into int64, four channels per pass) on the
 * filter arranged as that kernel reads it (arrange_rows_s16 of the [out, h * w * in] filter).
 * One group; any stride, padding and dilation. The sums are the reference's exact int64 sums, so
 * the outputs are the same bytes. */
#if defined(__ARM_FEATURE_DSP)

#include <stdint.h>
#include <string.h>

#include "microbuild/kernels/conv2d.h"
#include "microbuild/kernels/fully_connected.h"

void mb_conv2d_s16_dsp(const mb_conv2d_s8_params *p, const int16_t *input, const int8_t *filter,
                       const int64_t *bias, const int32_t *multipliers, const int32_t *shifts,
                       int16_t *output, void *scratch)
{
    int16_t *column = (int16_t *)scratch;
    const int32_t depth = p->input_c;
    const mb_fully_connected_s16_params rows = {
        .batches = 1,
        .input_depth = p->filter_h * p->filter_w * depth,
        .output_depth = p->output_c,
        .activation_min = p->activation_min,
        .activation_max = p->activation_max,
        .output_multiplier = 0,
        .output_shift = 0,
        .output_multipliers = multipliers,
        .output_shifts = shifts,
    };
    int16_t *out = output;
    for (int32_t b = 0; b < p->batches; b++) {
        const int16_t *in = input + b * p->input_h * p->input_w * depth;
        for (int32_t oy = 0; oy < p->output_h; oy++) {
            for (int32_t ox = 0; ox < p->output_w; ox++) {
                const int32_t y0 = oy * p->stride_h - p->pad_top;
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                int16_t *c = column;
                for (int32_t ky = 0; ky < p->filter_h; ky++) {
                    const int32_t y = y0 + ky * p->dilation_h;
                    for (int32_t kx = 0; kx < p->filter_w; kx++) {
                        const int32_t x = x0 + kx * p->dilation_w;
                        if (y < 0 || y >= p->input_h || x < 0 || x >= p->input_w) {
                            memset(c, 0, (size_t)depth * sizeof(int16_t));
                        } else {
                            memcpy(c, in + (y * p->input_w + x) * depth,
                                   (size_t)depth * sizeof(int16_t));
                        }
                        c += depth;
                    }
                }
                mb_fully_connected_s16_dsp(&rows, column, filter, bias, out, (void *)0);
                out += p->output_c;
            }
        }
    }
}

#else
typedef int mb_conv2d_s16_dsp_unused;
#endif
