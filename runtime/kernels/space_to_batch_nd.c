#include "microbuild/kernels/space_to_batch_nd.h"

void mb_space_to_batch_nd(const mb_space_to_batch_nd_params *p, const void *input, void *output)
{
    const unsigned char *in = (const unsigned char *)input;
    unsigned char *out = (unsigned char *)output;
    const int32_t px = p->pixel_bytes;
    const int32_t row_bytes = p->input_w * px;
    const int32_t image_bytes = p->input_h * row_bytes;
    const unsigned char fill = (unsigned char)(p->pad_value & 0xFF);
    for (int32_t sh = 0; sh < p->block_h; sh++) {
        for (int32_t sw = 0; sw < p->block_w; sw++) {
            for (int32_t b = 0; b < p->batches; b++) {
                const unsigned char *image = in + b * image_bytes;
                for (int32_t oh = 0; oh < p->output_h; oh++) {
                    const int32_t ih = oh * p->block_h + sh - p->pad_top;
                    for (int32_t ow = 0; ow < p->output_w; ow++) {
                        const int32_t iw = ow * p->block_w + sw - p->pad_left;
                        if (ih < 0 || ih >= p->input_h || iw < 0 || iw >= p->input_w) {
                            for (int32_t i = 0; i < px; i++) {
                                out[i] = fill;
                            }
                        } else {
                            const unsigned char *src = image + ih * row_bytes + iw * px;
                            for (int32_t i = 0; i < px; i++) {
                                out[i] = src[i];
                            }
                        }
                        out += px;
                    }
                }
            }
        }
    }
}
