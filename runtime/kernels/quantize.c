#include "microbuild/kernels/quantize.h"

#include "microbuild/quant.h"

/* std::round for |x| <= 65536: halves away from zero. Truncation gives the integer part t exactly,
 * and x - t is exact too (t and x are within a factor of two of each other, or t is 0). */
static int32_t round_half_away_from_zero(float x)
{
    int32_t t = (int32_t)x;
    const float fraction = x - (float)t;
    if (fraction >= 0.5f) {
        t++;
    } else if (fraction <= -0.5f) {
        t--;
    }
    return t;
}

void mb_quantize_f32_s8(float scale, int32_t zero_point, const float *input, int8_t *output,
                        int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        float q = input[i] / scale;
        /* Every |q| >= 256 saturates whatever the zero point, so bounding q first changes no
         * result and keeps the float -> int conversion defined. TFLM's conversion of NaN and of
         * values beyond int32 is undefined behaviour; NaN is sent to the zero point here. */
        if (q != q) {
            q = 0.0f;
        } else if (q > 256.0f) {
            q = 256.0f;
        } else if (q < -256.0f) {
            q = -256.0f;
        }
        output[i] = (int8_t)mb_clamp_i32(round_half_away_from_zero(q) + zero_point, -128, 127);
    }
}

/* The same for int16 (16x8 models): every |q| >= 65536 saturates. */
void mb_quantize_f32_s16(float scale, int32_t zero_point, const float *input, int16_t *output,
                         int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        float q = input[i] / scale;
        if (q != q) {
            q = 0.0f;
        } else if (q > 65536.0f) {
            q = 65536.0f;
        } else if (q < -65536.0f) {
            q = -65536.0f;
        }
        output[i] = (int16_t)mb_clamp_i32(round_half_away_from_zero(q) + zero_point, -32768,
                                          32767);
    }
}
