#include "microbuild/kernels/batch_matmul_f32.h"

void mb_batch_matmul_f32(const mb_batch_matmul_params *p, const float *lhs, const float *rhs,
                         float *output)
{
    float *out = output;
    for (int32_t b0 = 0; b0 < p->batch_dims[0]; b0++) {
        for (int32_t b1 = 0; b1 < p->batch_dims[1]; b1++) {
            for (int32_t b2 = 0; b2 < p->batch_dims[2]; b2++) {
                const float *l = lhs + b0 * p->lhs_batch_strides[0] +
                                 b1 * p->lhs_batch_strides[1] + b2 * p->lhs_batch_strides[2];
                const float *r = rhs + b0 * p->rhs_batch_strides[0] +
                                 b1 * p->rhs_batch_strides[1] + b2 * p->rhs_batch_strides[2];
                for (int32_t i = 0; i < p->rows; i++) {
                    const float *row = l + i * p->lhs_row_stride;
                    for (int32_t j = 0; j < p->cols; j++) {
                        const float *col = r + j * p->rhs_col_stride;
                        float total = 0.0f;
                        for (int32_t k = 0; k < p->depth; k++) {
                            total = MB_F32_MULADD(total, row[k * p->lhs_depth_stride],
                                                  col[k * p->rhs_depth_stride]);
                        }
                        *out++ = total;
                    }
                }
            }
        }
    }
}
