#include "microbuild/kernels/logical.h"

/* Row functions for mb_broadcast_binary_s8: the bytes are bools (0 or 1). */
static void and_row(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                    int32_t b_step, int8_t *out, int32_t n)
{
    (void)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int8_t)(a[i * a_step] && b[i * b_step]);
    }
}

static void or_row(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,
                   int32_t b_step, int8_t *out, int32_t n)
{
    (void)params;
    for (int32_t i = 0; i < n; i++) {
        out[i] = (int8_t)(a[i * a_step] || b[i * b_step]);
    }
}

void mb_logical_and(const mb_broadcast_shape *shape, const uint8_t *input1,
                    const uint8_t *input2, uint8_t *output)
{
    mb_broadcast_binary_s8(shape, (const int8_t *)input1, (const int8_t *)input2,
                           (int8_t *)output, and_row, 0);
}

void mb_logical_or(const mb_broadcast_shape *shape, const uint8_t *input1, const uint8_t *input2,
                   uint8_t *output)
{
    mb_broadcast_binary_s8(shape, (const int8_t *)input1, (const int8_t *)input2,
                           (int8_t *)output, or_row, 0);
}

void mb_logical_not(const uint8_t *input, uint8_t *output, int32_t size)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = (uint8_t)!input[i];
    }
}
