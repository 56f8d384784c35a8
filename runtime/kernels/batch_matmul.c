#include "microbuild/kernels/batch_matmul.h"
#include "microbuild/quant.h"

void mb_batch_matmul_s8(const mb_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs,
                        int8_t *output)
{
    int8_t *out = output;
    for (int32_t b0 = 0; b0 < p->batch_dims[0]; b0++) {
        for (int32_t b1 = 0; b1 < p->batch_dims[1]; b1++) {
            for (int32_t b2 = 0; b2 < p->batch_dims[2]; b2++) {
                const int8_t *l = lhs + b0 * p->lhs_batch_strides[0] +
                                  b1 * p->lhs_batch_strides[1] + b2 * p->lhs_batch_strides[2];
                const int8_t *r = rhs + b0 * p->rhs_batch_strides[0] +
                                  b1 * p->rhs_batch_strides[1] + b2 * p->rhs_batch_strides[2];
                for (int32_t i = 0; i < p->rows; i++) {
                    const int8_t *row = l + i * p->lhs_row_stride;
                    for (int32_t j = 0; j < p->cols; j++) {
                        const int8_t *col = r + j * p->rhs_col_stride;
                        int32_t acc = 0;
                        for (int32_t k = 0; k < p->depth; k++) {
                            acc += ((int32_t)row[k * p->lhs_depth_stride] + p->lhs_offset) *
                                   ((int32_t)col[k * p->rhs_depth_stride] + p->rhs_offset);
                        }
                        const int32_t v = mb_mul_by_quantized_multiplier(acc, p->multiplier,
                                                                         (int)p->shift);
                        *out++ = (int8_t)mb_clamp_i32(v + p->output_offset, p->activation_min,
                                                      p->activation_max);
                    }
                }
            }
        }
    }
}

void mb_batch_matmul_s16(const mb_batch_matmul_params *p, const int16_t *lhs,
                         const int16_t *rhs, int16_t *output)
{
    int16_t *out = output;
    for (int32_t b0 = 0; b0 < p->batch_dims[0]; b0++) {
        for (int32_t b1 = 0; b1 < p->batch_dims[1]; b1++) {
            for (int32_t b2 = 0; b2 < p->batch_dims[2]; b2++) {
                const int16_t *l = lhs + b0 * p->lhs_batch_strides[0] +
                                   b1 * p->lhs_batch_strides[1] + b2 * p->lhs_batch_strides[2];
                const int16_t *r = rhs + b0 * p->rhs_batch_strides[0] +
                                   b1 * p->rhs_batch_strides[1] + b2 * p->rhs_batch_strides[2];
                for (int32_t i = 0; i < p->rows; i++) {
                    const int16_t *row = l + i * p->lhs_row_stride;
                    for (int32_t j = 0; j < p->cols; j++) {
                        const int16_t *col = r + j * p->rhs_col_stride;
                        int64_t acc = 0;
                        for (int32_t k = 0; k < p->depth; k++) {
                            acc += (int32_t)row[k * p->lhs_depth_stride] *
                                   (int32_t)col[k * p->rhs_depth_stride];
                        }
                        const int32_t v = mb_mul_by_quantized_multiplier_s64(acc, p->multiplier,
                                                                             (int)p->shift);
                        *out++ = (int16_t)mb_clamp_i32(v, p->activation_min,
                                                       p->activation_max);
                    }
                }
            }
        }
    }
}
