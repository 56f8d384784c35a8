/* BATCH_MATMUL, bit-exact with TFLM's reference BatchMatMul (int8: int32 sums; 16x8: int16
 * operands with zero point 0, int64 sums):
 *
 *   output[b][i][j] = clamp(output_offset + M * sum_k (lhs(b, i, k) + lhs_offset)
 *                                                     * (rhs(b, k, j) + rhs_offset))
 *
 * with one per-tensor multiplier M (Q31 multiplier and shift). Up to three batch dimensions
 * (rank 5, TFLM's limit), either operand broadcast along any of them (its batch stride is 0).
 * Element (i, k) of an lhs matrix is at i * lhs_row_stride + k * lhs_depth_stride, element
 * (k, j) of an rhs matrix at k * rhs_depth_stride + j * rhs_col_stride: adj_x / adj_y (and a
 * constant rhs the compiler stored transposed) are only other strides. */
#ifndef MICROBUILD_KERNELS_BATCH_MATMUL_H
#define MICROBUILD_KERNELS_BATCH_MATMUL_H

#include <stdint.h>

typedef struct {
    int32_t batch_dims[3];    /* the output's leading dimensions (1 where absent) */
    int32_t lhs_batch_strides[3];
    int32_t rhs_batch_strides[3];
    int32_t rows, cols, depth;
    int32_t lhs_row_stride, lhs_depth_stride;
    int32_t rhs_depth_stride, rhs_col_stride;
    int32_t lhs_offset;       /* minus the lhs zero point */
    int32_t rhs_offset;       /* minus the rhs zero point */
    int32_t output_offset;
    int32_t multiplier, shift; /* shift > 0 shifts left */
    int32_t activation_min, activation_max;
} mb_batch_matmul_params;

void mb_batch_matmul_s8(const mb_batch_matmul_params *params, const int8_t *lhs,
                        const int8_t *rhs, int8_t *output);

void mb_batch_matmul_s16(const mb_batch_matmul_params *params, const int16_t *lhs,
                         const int16_t *rhs, int16_t *output);

#endif
