#include "microbuild/kernels/resize_f32.h"

#include <math.h>

/* TFLM's ComputeInterpolationValues. */
static void interpolation(int32_t value, float scale, int32_t half_pixel_centers,
                          int32_t input_size, float *position, int32_t *lower, int32_t *upper)
{
    *position = half_pixel_centers ? MB_F32_MULADD(-0.5f, (float)value + 0.5f, scale)
                                   : (float)value * scale;
#if defined(__ARM_FP) && ((__ARM_FP & 8) || __ARM_ARCH >= 8)
    /* FPv5 (a double-precision FPU on the M7, any FPU on v8-M: M33, M55): VRINTM / VRINTP */
    const int32_t below = (int32_t)floorf(*position);
    const int32_t above = (int32_t)ceilf(*position);
#else
    /* floorf and ceilf of a position well inside int32 without the library calls (FPv4 has no
     * directed rounding): truncate, then a step down for a negative fraction, up for a
     * positive one. */
    const float v = *position;
    int32_t below = (int32_t)v; /* toward zero */
    if ((float)below > v) {
        below--;
    }
    const int32_t above = (float)below < v ? below + 1 : below;
#endif
    *lower = below > 0 ? below : 0;
    *upper = above < input_size - 1 ? above : input_size - 1;
}

void mb_resize_bilinear_f32(const mb_resize_bilinear_f32_params *p, const float *input,
                            float *output)
{
    const int32_t c = p->channels;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *image = input + b * p->input_h * p->input_w * c;
        for (int32_t y = 0; y < p->output_h; y++) {
            float in_y;
            int32_t y0, y1;
            interpolation(y, p->height_scale, p->half_pixel_centers, p->input_h, &in_y, &y0, &y1);
            const float dy = in_y - (float)y0;
            const float *row0 = image + y0 * p->input_w * c;
            const float *row1 = image + y1 * p->input_w * c;
            for (int32_t x = 0; x < p->output_w; x++) {
                float in_x;
                int32_t x0, x1;
                interpolation(x, p->width_scale, p->half_pixel_centers, p->input_w, &in_x, &x0,
                              &x1);
                const float dx = in_x - (float)x0;
                const float *p00 = row0 + x0 * c, *p01 = row0 + x1 * c;
                const float *p10 = row1 + x0 * c, *p11 = row1 + x1 * c;
                for (int32_t k = 0; k < c; k++) {
                    /* TFLM: p00 * (1 - dy) * (1 - dx) + p10 * dy * (1 - dx)
                     *       + p01 * (1 - dy) * dx + p11 * dy * dx + 0.0f */
                    float sum = MB_F32_MULADD(p10[k] * dy * (1 - dx), p00[k] * (1 - dy),
                                              1 - dx);
                    sum = MB_F32_MULADD(sum, p01[k] * (1 - dy), dx);
                    sum = MB_F32_MULADD(sum, p11[k] * dy, dx);
                    *output++ = sum + 0.0f;
                }
            }
        }
    }
}
