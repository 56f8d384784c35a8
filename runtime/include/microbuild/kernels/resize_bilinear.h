/* Int8 RESIZE_BILINEAR, bit-exact with TFLM's ResizeBilinearInteger (the int8 path: no float).
 *
 * TFLM positions every output row and column on the input in 10-bit fixed point, from a scale
 * rounded to 1/1024 (align_corners and half_pixel_centers change the scale and offset), and
 * blends the four neighbours with weights that sum to 2^20, rounding half away from zero. The
 * compiler evaluates the positions: for each output row the byte offsets of input rows y0 and y1
 * and the fraction dy (in 1/1024, negative where half-pixel centres fall before the first row,
 * whose two rows are then the same), and the same for columns. The kernel only blends:
 *   out = round((v00 (1024-dy)(1024-dx) + v10 dy (1024-dx) + v01 (1024-dy) dx + v11 dy dx) / 2^20)
 * Every weight is below 1536^2, so the sum fits in 32 bits (TFLM uses 64; the values agree). */
#ifndef MICROBUILD_KERNELS_RESIZE_BILINEAR_H
#define MICROBUILD_KERNELS_RESIZE_BILINEAR_H

#include <stdint.h>

typedef struct {
    int32_t batches;
    int32_t image_elements;                  /* input_h * input_w * channels */
    int32_t output_h, output_w, channels;
} mb_resize_bilinear_params;

/* rows: output_h triples (y0 * input_w * channels, y1 * input_w * channels, dy);
 * cols: output_w triples (x0 * channels, x1 * channels, dx). */
void mb_resize_bilinear_s8(const mb_resize_bilinear_params *params, const int32_t *rows,
                           const int32_t *cols, const int8_t *input, int8_t *output);

#endif
