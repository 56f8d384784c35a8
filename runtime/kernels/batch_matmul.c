#include "microbuild/kernels/batch_matmul.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#endif

#if defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#include <string.h>

static inline int32_t bmm_load32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4); /* LDR: unaligned access is allowed on v7E-M / v8-M Main */
    return v;
}

/* offset2 + sign-extended bytes 1 and 3 of v, per 16-bit half. */
static inline int32_t bmm_sxtab16_odd(int32_t offset2, int32_t v)
{
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(offset2), "r"(v));
    return r;
}
#endif

/* sum_k (l[k] + lo) * (r[k] + ro) over two contiguous rows. With the DSP extension 4 products per
 * step: SXTAB16 adds the offset to two sign-extended bytes at once (|byte + offset| <= 255 fits a
 * 16-bit half), SMLAD multiplies and adds the two pairs. The sums are the reference's integers in
 * another order; the compiler bounds the inner dimension so that no partial sum overflows. */
static inline int32_t bmm_dot_s8(const int8_t *l, const int8_t *r, int32_t depth, int32_t lo,
                                 int32_t ro)
{
    int32_t acc = 0;
    int32_t k = 0;
#if defined(__ARM_FEATURE_MVE)
    /* Helium: 8 products a step, VLDRB.S16 widening, the offsets added in int16 lanes (|byte +
     * offset| <= 255), VMLADAVA.S16 into the int32 sum; the last 1-7 by a predicated step
     * whose masked lanes are not summed. */
    for (; k + 8 <= depth; k += 8) {
        acc = vmladavaq_s16(acc, vaddq_n_s16(vldrbq_s16(l + k), (int16_t)lo),
                            vaddq_n_s16(vldrbq_s16(r + k), (int16_t)ro));
    }
    if (k < depth) {
        const mve_pred16_t lanes = vctp16q((uint32_t)(depth - k));
        acc = vmladavaq_p_s16(acc, vaddq_n_s16(vldrbq_z_s16(l + k, lanes), (int16_t)lo),
                              vaddq_n_s16(vldrbq_z_s16(r + k, lanes), (int16_t)ro), lanes);
    }
    return acc;
#elif defined(__ARM_FEATURE_DSP)
    const int32_t lo2 = (int32_t)(((uint32_t)lo & 0xFFFFu) * 0x10001u);
    const int32_t ro2 = (int32_t)(((uint32_t)ro & 0xFFFFu) * 0x10001u);
    for (; k + 4 <= depth; k += 4) {
        const int32_t lw = bmm_load32(l + k), rw = bmm_load32(r + k);
        acc = __smlad(__sxtab16(lo2, lw), __sxtab16(ro2, rw), acc);
        acc = __smlad(bmm_sxtab16_odd(lo2, lw), bmm_sxtab16_odd(ro2, rw), acc);
    }
#endif
    for (; k < depth; k++) {
        acc += ((int32_t)l[k] + lo) * ((int32_t)r[k] + ro);
    }
    return acc;
}

void mb_batch_matmul_s8(const mb_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs,
                        int8_t *output)
{
    /* The parameters are read once: stores through output could alias *p. */
    const int32_t rows = p->rows, cols = p->cols, depth = p->depth;
    const int32_t lhs_row = p->lhs_row_stride, lhs_k = p->lhs_depth_stride;
    const int32_t rhs_k = p->rhs_depth_stride, rhs_col = p->rhs_col_stride;
    const int32_t lo = p->lhs_offset, ro = p->rhs_offset, out_offset = p->output_offset;
    const int32_t multiplier = p->multiplier, shift = p->shift;
    const int32_t act_min = p->activation_min, act_max = p->activation_max;
    const int contiguous = lhs_k == 1 && rhs_k == 1;
    int8_t *out = output;
    for (int32_t b0 = 0; b0 < p->batch_dims[0]; b0++) {
        for (int32_t b1 = 0; b1 < p->batch_dims[1]; b1++) {
            for (int32_t b2 = 0; b2 < p->batch_dims[2]; b2++) {
                const int8_t *l = lhs + b0 * p->lhs_batch_strides[0] +
                                  b1 * p->lhs_batch_strides[1] + b2 * p->lhs_batch_strides[2];
                const int8_t *r = rhs + b0 * p->rhs_batch_strides[0] +
                                  b1 * p->rhs_batch_strides[1] + b2 * p->rhs_batch_strides[2];
                for (int32_t i = 0; i < rows; i++) {
                    const int8_t *row = l + i * lhs_row;
                    for (int32_t j = 0; j < cols; j++) {
                        const int8_t *col = r + j * rhs_col;
                        int32_t acc;
                        if (contiguous) {
                            acc = bmm_dot_s8(row, col, depth, lo, ro);
                        } else {
                            acc = 0;
                            const int8_t *a = row, *b = col;
                            for (int32_t k = 0; k < depth; k++, a += lhs_k, b += rhs_k) {
                                acc += ((int32_t)*a + lo) * ((int32_t)*b + ro);
                            }
                        }
                        /* mb_requantize_fast32: the reference's value for the compiler's
                         * positive multipliers (quant_fast.h). */
                        const int32_t v = mb_requantize_fast32(acc, multiplier, shift);
                        *out++ = (int8_t)mb_clamp_i32(v + out_offset, act_min, act_max);
                    }
                }
            }
        }
    }
}

/* sum_k l[k] * r[k] in int64 over two contiguous int16 rows; with the DSP extension SMLALD takes
 * two products per step. */
static inline int64_t bmm_dot_s16(const int16_t *l, const int16_t *r, int32_t depth)
{
    int64_t acc = 0;
    int32_t k = 0;
#if defined(__ARM_FEATURE_DSP)
    for (; k + 2 <= depth; k += 2) {
        acc = __smlald(bmm_load32(l + k), bmm_load32(r + k), acc);
    }
#endif
    for (; k < depth; k++) {
        acc += (int32_t)l[k] * (int32_t)r[k];
    }
    return acc;
}

void mb_batch_matmul_s16(const mb_batch_matmul_params *p, const int16_t *lhs,
                         const int16_t *rhs, int16_t *output)
{
    const int32_t rows = p->rows, cols = p->cols, depth = p->depth;
    const int32_t lhs_row = p->lhs_row_stride, lhs_k = p->lhs_depth_stride;
    const int32_t rhs_k = p->rhs_depth_stride, rhs_col = p->rhs_col_stride;
    const int32_t multiplier = p->multiplier, shift = p->shift;
    const int32_t act_min = p->activation_min, act_max = p->activation_max;
    const int contiguous = lhs_k == 1 && rhs_k == 1;
    int16_t *out = output;
    for (int32_t b0 = 0; b0 < p->batch_dims[0]; b0++) {
        for (int32_t b1 = 0; b1 < p->batch_dims[1]; b1++) {
            for (int32_t b2 = 0; b2 < p->batch_dims[2]; b2++) {
                const int16_t *l = lhs + b0 * p->lhs_batch_strides[0] +
                                   b1 * p->lhs_batch_strides[1] + b2 * p->lhs_batch_strides[2];
                const int16_t *r = rhs + b0 * p->rhs_batch_strides[0] +
                                   b1 * p->rhs_batch_strides[1] + b2 * p->rhs_batch_strides[2];
                for (int32_t i = 0; i < rows; i++) {
                    const int16_t *row = l + i * lhs_row;
                    for (int32_t j = 0; j < cols; j++) {
                        const int16_t *col = r + j * rhs_col;
                        int64_t acc;
                        if (contiguous) {
                            acc = bmm_dot_s16(row, col, depth);
                        } else {
                            acc = 0;
                            const int16_t *a = row, *b = col;
                            for (int32_t k = 0; k < depth; k++, a += lhs_k, b += rhs_k) {
                                acc += (int32_t)*a * (int32_t)*b;
                            }
                        }
                        const int32_t v = mb_mul_by_quantized_multiplier_s64(acc, multiplier,
                                                                             (int)shift);
                        *out++ = (int16_t)mb_clamp_i32(v, act_min, act_max);
                    }
                }
            }
        }
    }
}
