#include "microbuild/kernels/resize_bilinear.h"

void mb_resize_bilinear_s8(const mb_resize_bilinear_params *p, const int32_t *rows,
                           const int32_t *cols, const int8_t *input, int8_t *output)
{
    const int32_t one = (int32_t)1 << 10;
    const int32_t half = (int32_t)1 << 19;
    int8_t *out = output;
    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *image = input + b * p->image_elements;
        for (int32_t y = 0; y < p->output_h; y++) {
            const int8_t *row0 = image + rows[3 * y];
            const int8_t *row1 = image + rows[3 * y + 1];
            const int32_t dy = rows[3 * y + 2];
            for (int32_t x = 0; x < p->output_w; x++) {
                const int32_t c0 = cols[3 * x];
                const int32_t c1 = cols[3 * x + 1];
                const int32_t dx = cols[3 * x + 2];
                const int32_t w00 = (one - dy) * (one - dx);
                const int32_t w10 = dy * (one - dx);
                const int32_t w01 = (one - dy) * dx;
                const int32_t w11 = dy * dx;
                for (int32_t c = 0; c < p->channels; c++) {
                    const int32_t sum = (int32_t)row0[c0 + c] * w00 + (int32_t)row1[c0 + c] * w10 +
                                        (int32_t)row0[c1 + c] * w01 + (int32_t)row1[c1 + c] * w11;
                    /* Round half away from zero, then truncate: TFLM's default (double rounding)
                     * build. Division by a power of two truncates toward zero in C99. */
                    const int32_t rounded = sum > 0 ? sum + half : sum - half;
                    *out++ = (int8_t)(rounded / ((int32_t)1 << 20));
                }
            }
        }
    }
}
