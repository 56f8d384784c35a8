/* Walking two int8 inputs against one output with TFLite's broadcasting rules.
 *
 * The compiler reduces every broadcast to this shape description at compile time: size-1 output
 * dimensions are dropped and neighbouring dimensions that step through both inputs contiguously
 * are merged, so a same-shape operation is one dimension with strides {1} and {1}, a scalar operand
 * is one dimension with stride 0, and a per-channel operand is two dimensions. The walker then
 * calls a row function once per innermost run, which keeps the per-element loop tight.
 */
#ifndef MICROBUILD_KERNELS_BROADCAST_H
#define MICROBUILD_KERNELS_BROADCAST_H

#include <stdint.h>

/* TFLM broadcasts binary operators over at most 6 dimensions. */
#define MB_BROADCAST_MAX_DIMS 6

typedef struct {
    int32_t num_dims;                       /* 1 .. MB_BROADCAST_MAX_DIMS */
    int32_t dims[MB_BROADCAST_MAX_DIMS];    /* output extents, outermost first */
    int32_t a_strides[MB_BROADCAST_MAX_DIMS]; /* elements of a per step of each dim; 0: broadcast */
    int32_t b_strides[MB_BROADCAST_MAX_DIMS]; /* the same for b */
} mb_broadcast_shape;

/* Computes out[i] = f(a[i * a_step], b[i * b_step]) for i in [0, n). Each out[i] must be written
 * only after a[i * a_step] and b[i * b_step] were read, so an output may share a's buffer. */
/* One step of the walk every broadcasting kernel makes over the outer dimensions (all but the
 * last, which the kernel's own row loop covers): the odometer ``index`` moves one row on,
 * innermost dimension first, and each of the ``count`` operands' element offsets moves with it
 * by that operand's strides, so no row needs a multiplication. Returns 0 once every row has been
 * visited. Used by the binary walkers below (broadcast.c) and SELECT_V2 (select_v2.c). */
static inline int mb_broadcast_next_row(const int32_t *dims, int32_t last, int32_t *index,
                                        int32_t count, const int32_t *const *strides,
                                        int32_t *offsets)
{
    for (int32_t d = last - 1; d >= 0; d--) {
        index[d]++;
        for (int32_t k = 0; k < count; k++) {
            offsets[k] += strides[k][d];
        }
        if (index[d] < dims[d]) {
            return 1;
        }
        for (int32_t k = 0; k < count; k++) {
            offsets[k] -= strides[k][d] * dims[d];
        }
        index[d] = 0;
    }
    return 0;
}

typedef void (*mb_binary_row_s8)(const void *params, const int8_t *a, int32_t a_step,
                                 const int8_t *b, int32_t b_step, int8_t *out, int32_t n);

/* Calls row() for every innermost run of the output, in memory order; out is dense. */
void mb_broadcast_binary_s8(const mb_broadcast_shape *shape, const int8_t *a, const int8_t *b,
                            int8_t *out, mb_binary_row_s8 row, const void *params);

/* The same walk over int16 inputs and output (16x8 models). */
typedef void (*mb_binary_row_s16)(const void *params, const int16_t *a, int32_t a_step,
                                  const int16_t *b, int32_t b_step, int16_t *out, int32_t n);
void mb_broadcast_binary_s16(const mb_broadcast_shape *shape, const int16_t *a, const int16_t *b,
                             int16_t *out, mb_binary_row_s16 row, const void *params);

/* Two int8 inputs, one bool output (TFLite's bool: one byte, 0 or 1), e.g. comparisons. */
typedef void (*mb_binary_row_s8_bool)(const void *params, const int8_t *a, int32_t a_step,
                                      const int8_t *b, int32_t b_step, uint8_t *out, int32_t n);
void mb_broadcast_binary_s8_bool(const mb_broadcast_shape *shape, const int8_t *a,
                                 const int8_t *b, uint8_t *out, mb_binary_row_s8_bool row,
                                 const void *params);

/* float32 (float models' ADD/SUB/MUL/DIV/MINIMUM/MAXIMUM/SQUARED_DIFFERENCE/PRELU) and int32
 * (shape arithmetic and int32 models): arith_f32.c and arith_s32.c. */
typedef void (*mb_binary_row_f32)(const void *params, const float *a, int32_t a_step,
                                  const float *b, int32_t b_step, float *out, int32_t n);
void mb_broadcast_binary_f32(const mb_broadcast_shape *shape, const float *a, const float *b,
                             float *out, mb_binary_row_f32 row, const void *params);
typedef void (*mb_binary_row_s32)(const void *params, const int32_t *a, int32_t a_step,
                                  const int32_t *b, int32_t b_step, int32_t *out, int32_t n);
void mb_broadcast_binary_s32(const mb_broadcast_shape *shape, const int32_t *a,
                             const int32_t *b, int32_t *out, mb_binary_row_s32 row,
                             const void *params);
/* Two float32 inputs, one bool output (float32 comparisons). */
typedef void (*mb_binary_row_f32_bool)(const void *params, const float *a, int32_t a_step,
                                       const float *b, int32_t b_step, uint8_t *out, int32_t n);
void mb_broadcast_binary_f32_bool(const mb_broadcast_shape *shape, const float *a,
                                  const float *b, uint8_t *out, mb_binary_row_f32_bool row,
                                  const void *params);

#endif
