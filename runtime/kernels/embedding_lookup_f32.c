#include "microbuild/kernels/embedding_lookup.h"

#include <stddef.h>

int32_t mb_embedding_lookup_hybrid(const int32_t *ids, int32_t num_ids, const int8_t *table,
                                   int32_t num_rows, int32_t row_size, float scale,
                                   float *output)
{
    for (int32_t i = 0; i < num_ids; i++) {
        const int32_t id = ids[i];
        if (id < 0 || id >= num_rows) {
            return -1;
        }
        const int8_t *row = table + (size_t)id * (size_t)row_size;
        for (int32_t j = 0; j < row_size; j++) {
            output[j] = (float)row[j] * scale;
        }
        output += row_size;
    }
    return 0;
}
