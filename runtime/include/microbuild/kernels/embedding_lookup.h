/* EMBEDDING_LOOKUP's hybrid form, bit-exact with TFLM's EvalHybrid: rows of an int8 table (zero
 * point 0) picked by int32 ids and dequantized into float32, each value times the table's scale
 * in float. (Plain float32 or int8 lookups copy rows with mb_gather, gather.h.) An id outside the
 * table stops the lookup and the kernel returns non-zero, as TFLM's Invoke fails. */
#ifndef MICROBUILD_KERNELS_EMBEDDING_LOOKUP_H
#define MICROBUILD_KERNELS_EMBEDDING_LOOKUP_H

#include <stdint.h>

#include "microbuild/kernels/gather.h"

int32_t mb_embedding_lookup_hybrid(const int32_t *ids, int32_t num_ids, const int8_t *table,
                                   int32_t num_rows, int32_t row_size, float scale,
                                   float *output);

#endif
