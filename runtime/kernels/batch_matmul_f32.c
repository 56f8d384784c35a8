#include "microbuild/kernels/batch_matmul_f32.h"

/* One output row: lhs row `row` against every column of r. Four columns side by side share the
 * row's loads; each sum is still the reference's, from 0 in depth order (pointers stepped by the
 * strides instead of an index multiplied per term). */
static void row_times_columns(const mb_batch_matmul_params *p, const float *row, const float *r,
                              float *out)
{
    const int32_t ls = p->lhs_depth_stride, rs = p->rhs_depth_stride, cs = p->rhs_col_stride;
    int32_t j = 0;
    for (; j + 4 <= p->cols; j += 4) {
        const float *x = row;
        const float *c = r + j * cs;
        float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f;
        for (int32_t k = 0; k < p->depth; k++, x += ls, c += rs) {
            const float v = *x;
            t0 = MB_F32_MULADD(t0, v, c[0]);
            t1 = MB_F32_MULADD(t1, v, c[cs]);
            t2 = MB_F32_MULADD(t2, v, c[2 * cs]);
            t3 = MB_F32_MULADD(t3, v, c[3 * cs]);
        }
        out[j] = t0, out[j + 1] = t1, out[j + 2] = t2, out[j + 3] = t3;
    }
    for (; j < p->cols; j++) {
        const float *x = row;
        const float *c = r + j * cs;
        float total = 0.0f;
        for (int32_t k = 0; k < p->depth; k++, x += ls, c += rs) {
            total = MB_F32_MULADD(total, *x, *c);
        }
        out[j] = total;
    }
}

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
                for (int32_t i = 0; i < p->rows; i++, out += p->cols) {
                    row_times_columns(p, l + i * p->lhs_row_stride, r, out);
                }
            }
        }
    }
}
