/* DEPTHWISE_CONV_2D, Helium variant "mve_temporal" (Cortex-M55): the 1-D time convolutions of
 * streaming audio models (MLPerf Tiny's streaming wake word: 1x28x1x128 -> 1x24x1x128 with a
 * 5x1 filter, then 10x1 and 15x1 ones). Input and output are one pixel wide, the filter H x 1
 * with at most 16 taps, no dilation, depth multiplier 1.
 *
 * Why: the channels-innermost "mve" kernel multiplies 8 channels per VMULLB/VMULLT pair and
 * requantizes every block of 8 channels per output pixel: about 12 instructions per output of a
 * 5-tap filter (2.4 a multiply-accumulate). Here an output is a dot product of its channel's taps
 * with consecutive values of that channel's time series: one VLDRB.8 and one VMLADAV.S8 whatever
 * the filter height (up to 16), 4 outputs of a channel (consecutive times) requantized together
 * with the channel's scalars and stored by one VSTRB.32 scatter.
 *
 * The time series must be contiguous for that, so 16 channels at a time are transposed into a
 * "plane" in scratch, one row per channel (VLDRB.U16 of 8 channels of one time step, VSTRB.16
 * scatter down the rows). Row i holds input time i - pad_top, the input zero point where that is
 * outside the input (filled once per call; the channels overwrite only the inside): a padding tap
 * then adds filter * (zero point + input offset) = 0, so every output starts from interior_bias
 * (bias + input_offset * the channel's filter sum) and sums filter * raw byte, the reference's
 * sum in another order, exact in int32. A dot product reads 16 bytes from its first tap: the
 * bytes after the last tap meet the zeros of the arranged filter (_arrange_temporal), whatever
 * they are (the next row, or the slack after the plane).
 *
 * Requantization as mve_planar's (requantize_mve.h's rounding): (sum + bias) << left, VQRDMULH
 * by the channel's multiplier, for a right shift VRSHL of high - 1 for negative highs (half away
 * from zero), zero point, clamp. The compiler checks |sum| * 2^left < 2^28 and right <= 28
 * (_fast_requantize_fits).
 *
 * The output may lie over the input starting a whole number of pixels before it: a write of
 * channel c lands on channel c of the same or an earlier time step, which is in the plane
 * already (or in an earlier batch image, done). Batches go in order for that. */
#if defined(__ARM_FEATURE_MVE)

#include <arm_mve.h>
#include <string.h>

#include "microbuild/kernels/depthwise_conv2d.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#define GROUP 16 /* channels per plane */

/* The plane's row pitch: the input times the windows reach (depthwise_conv2d.py mirrors it). */
static int32_t plane_pitch(const mb_depthwise_conv2d_s8_params *p)
{
    return (p->output_h - 1) * p->stride_h + p->filter_h;
}

/* The 4 dot products of times t .. t + 3 (rows STEP bytes apart: a constant 1 in the unit
 * stride copy, so the loads take immediate offsets) in 4 lanes. */
static ALWAYS_INLINE int32x4_t dots4(const int8_t *row, int32_t step, int8x16_t f)
{
    const int32_t s0 = vmladavq_s8(vldrbq_s8(row), f);
    const int32_t s1 = vmladavq_s8(vldrbq_s8(row + step), f);
    const int32_t s2 = vmladavq_s8(vldrbq_s8(row + 2 * step), f);
    const int32_t s3 = vmladavq_s8(vldrbq_s8(row + 3 * step), f);
    int32x4_t v;
    /* two VMOVs of GPR pairs into lanes (2, 0) and (3, 1) */
    __asm__("vmov %q0[2], %q0[0], %1, %3\n\t"
            "vmov %q0[3], %q0[1], %2, %4"
            : "=&w"(v)
            : "r"(s0), "r"(s1), "r"(s2), "r"(s3));
    return v;
}

/* What the channels of a group share, copied into locals by group_walk (the output stores may
 * alias anything reached through a pointer, and GCC re-read such scalars on every block). */
typedef struct {
    int32_t out_h, step, channels, zero_point, activation_min, activation_max;
} walk_shape;

/* Every output of the plane's channels 0 .. n - 1 (rows `pitch` apart; filter, the channels'
 * constants and out at the group's first channel). 4 outputs of a channel at a time: their dot
 * products, (sum + bias) << left, VQRDMULH, the rounding right shift (high - 1 for negative
 * highs when the channel has one: a VMLA of the sign by 1 or 0, so every channel takes the same
 * loop), zero point, clamp, one VSTRB.32 scatter (the last 1-3 times predicated; the lanes after
 * them read the slack and are not stored). The constants are 4 words a channel, made by the
 * compiler (depthwise_conv2d.py _temporal_table): interior bias, multiplier, left shift, minus
 * the right shift. STEP1: stride 1 along time. */
static ALWAYS_INLINE void group_walk(const walk_shape *shape, const int8_t *plane, int32_t pitch,
                                     int32_t n, const int8_t *filter, const int32_t *k,
                                     int8_t *out, const int step1)
{
    const walk_shape w = *shape;
    const int32_t step = step1 ? 1 : w.step;
    const int32x4_t amin = vdupq_n_s32(w.activation_min);
    const int32x4_t amax = vdupq_n_s32(w.activation_max);
    const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)w.channels);
    const int32_t whole = w.out_h & ~3;
    const mve_pred16_t last = vctp32q((uint32_t)(w.out_h - whole));
    for (int32_t j = 0; j < n; j++, plane += pitch, filter += 16, out++, k += 4) {
        const int32_t bias = k[0], multiplier = k[1], left = k[2], neg_right = k[3];
        const int32_t round = (int32_t)((uint32_t)neg_right >> 31);
        const int8x16_t f = vldrbq_s8(filter);
        const int8_t *row = plane;
        int8_t *o = out;
        for (int32_t t = 0; t < whole; t += 4, row += 4 * step, o += 4 * w.channels) {
            const int32x4_t acc = vshlq_r_s32(vaddq_n_s32(dots4(row, step, f), bias), left);
            int32x4_t hi = vqrdmulhq_n_s32(acc, multiplier);
            hi = vrshlq_n_s32(vmlaq_n_s32(hi, vshrq_n_s32(hi, 31), round), neg_right);
            hi = vminq_s32(vmaxq_s32(vaddq_n_s32(hi, w.zero_point), amin), amax);
            vstrbq_scatter_offset_s32(o, offsets, hi);
        }
        if (whole < w.out_h) {
            const int32x4_t acc = vshlq_r_s32(vaddq_n_s32(dots4(row, step, f), bias), left);
            int32x4_t hi = vqrdmulhq_n_s32(acc, multiplier);
            hi = vrshlq_n_s32(vmlaq_n_s32(hi, vshrq_n_s32(hi, 31), round), neg_right);
            hi = vminq_s32(vmaxq_s32(vaddq_n_s32(hi, w.zero_point), amin), amax);
            vstrbq_scatter_offset_p_s32(o, offsets, hi, last);
        }
    }
}

static NOINLINE void group_unit_stride(const walk_shape *shape, const int8_t *plane,
                                       int32_t pitch, int32_t n, const int8_t *filter,
                                       const int32_t *k, int8_t *out)
{
    group_walk(shape, plane, pitch, n, filter, k, out, 1);
}

static NOINLINE void group_any_stride(const walk_shape *shape, const int8_t *plane,
                                      int32_t pitch, int32_t n, const int8_t *filter,
                                      const int32_t *k, int8_t *out)
{
    group_walk(shape, plane, pitch, n, filter, k, out, 0);
}

/* Channels c0 .. c0 + n - 1 (n <= 16) of one batch image into the plane's rows 0 .. n - 1:
 * per input time, 8 channels per VLDRB.U16 and one VSTRB.16 scatter down 8 rows (predicated
 * only for a group of fewer than 16 channels: 8 instructions a time step instead of 20). */
static void fill_plane(const mb_depthwise_conv2d_s8_params *p, const int8_t *in, int32_t n,
                       int32_t pitch, int8_t *plane)
{
    const uint16x8_t down = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)pitch);
    const mve_pred16_t lo = vctp16q((uint32_t)n);
    const mve_pred16_t hi = n > 8 ? vctp16q((uint32_t)(n - 8)) : 0;
    const int32_t first = p->pad_top > 0 ? 0 : -p->pad_top;
    const int32_t end = p->input_h < pitch - p->pad_top ? p->input_h : pitch - p->pad_top;
    int8_t *dst = plane + p->pad_top + first;
    const int8_t *src = in + first * p->input_c;
    const int32_t step = p->input_c;
    if (n == GROUP) { /* a whole group: no predicates (a VMSR and a VPST per access) */
        for (int32_t iy = first; iy < end; iy++, src += step, dst++) {
            vstrbq_scatter_offset_u16((uint8_t *)dst, down, vldrbq_u16((const uint8_t *)src));
            vstrbq_scatter_offset_u16((uint8_t *)dst + 8 * pitch, down,
                                      vldrbq_u16((const uint8_t *)src + 8));
        }
        return;
    }
    for (int32_t iy = first; iy < end; iy++, src += step, dst++) {
        vstrbq_scatter_offset_p_u16((uint8_t *)dst, down,
                                    vldrbq_z_u16((const uint8_t *)src, lo), lo);
        if (n > 8) {
            vstrbq_scatter_offset_p_u16((uint8_t *)dst + 8 * pitch, down,
                                        vldrbq_z_u16((const uint8_t *)src + 8, hi), hi);
        }
    }
}

void mb_depthwise_conv2d_s8_mve_temporal(const mb_depthwise_conv2d_s8_params *p,
                                         const int8_t *input, const int8_t *filter,
                                         const int32_t *bias, const int32_t *interior_bias,
                                         const int32_t *multipliers, const int32_t *shifts,
                                         int8_t *output, void *scratch)
{
    (void)bias; /* every output starts from interior_bias: the padding holds the zero point */
    (void)multipliers; /* in the table after the interior biases (_temporal_table) */
    (void)shifts;
    const int32_t channels = p->input_c;
    const int32_t pitch = plane_pitch(p);
    int8_t *plane = (int8_t *)scratch;
    /* the zero point in the padding rows; the slack after the plane only meets zero taps */
    memset(plane, -p->input_offset, (size_t)(GROUP * pitch));
    const walk_shape shape = {p->output_h, p->stride_h, channels, p->output_offset,
                              p->activation_min, p->activation_max};
    const int32_t in_image = p->input_h * channels;
    const int32_t out_image = p->output_h * channels;
    for (int32_t b = 0; b < p->batches; b++) { /* in order: see the overlap above */
        for (int32_t c0 = 0; c0 < channels; c0 += GROUP) {
            const int32_t n = channels - c0 < GROUP ? channels - c0 : GROUP;
            fill_plane(p, input + b * in_image + c0, n, pitch, plane);
            int8_t *out = output + b * out_image + c0;
            const int32_t *k = interior_bias + channels + 4 * c0; /* _temporal_table */
            if (p->stride_h == 1) {
                group_unit_stride(&shape, plane, pitch, n, filter + 16 * c0, k, out);
            } else {
                group_any_stride(&shape, plane, pitch, n, filter + 16 * c0, k, out);
            }
        }
    }
}

#else
typedef int mb_depthwise_conv2d_mve_temporal_unused;
#endif
