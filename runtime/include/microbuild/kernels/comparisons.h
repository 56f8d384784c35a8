/* EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL on int8 inputs with broadcasting,
 * bool output (one byte, 0 or 1), bit-exact with TFLM's *WithScaling comparisons: both inputs are
 * brought to a common scale first (offset, shifted left 8 bits, multiplied by the input's own
 * scale as a Q31 multiplier), and the int32 results are compared. TFLM rescales even when both
 * inputs share a quantization, and the rescaling can map neighbouring values to one, so the
 * kernels always do it. */
#ifndef MICROBUILD_KERNELS_COMPARISONS_H
#define MICROBUILD_KERNELS_COMPARISONS_H

#include <stdint.h>

#include "microbuild/kernels/broadcast.h"
#include "microbuild/kernels/rescale_pair.h"

typedef struct {
    MB_RESCALE_PAIR_FIELDS     /* left_shift: 8 */
} mb_comparison_s8_params;

#define MB_DECLARE_COMPARISON(NAME)                                                             \
    void NAME(const mb_comparison_s8_params *params, const mb_broadcast_shape *shape,           \
              const int8_t *input1, const int8_t *input2, uint8_t *output);

MB_DECLARE_COMPARISON(mb_equal_s8)
MB_DECLARE_COMPARISON(mb_not_equal_s8)
MB_DECLARE_COMPARISON(mb_less_s8)
MB_DECLARE_COMPARISON(mb_less_equal_s8)
MB_DECLARE_COMPARISON(mb_greater_s8)
MB_DECLARE_COMPARISON(mb_greater_equal_s8)

/* The "keys" variants (comparisons_keys.c): the same results from two 256-entry tables the
 * compiler builds, one per input, indexed by the int8 value's byte. Each entry is the rank of that
 * value's rescaled int32 among both inputs' rescaled values, so comparing two keys compares the
 * rescaled values exactly (equal values get equal ranks). */
typedef struct {
    const uint16_t *keys1;
    const uint16_t *keys2;
} mb_comparison_keys;

#define MB_DECLARE_COMPARISON_KEYS(NAME)                                                        \
    void NAME(const mb_comparison_keys *keys, const mb_broadcast_shape *shape,                  \
              const int8_t *input1, const int8_t *input2, uint8_t *output);

MB_DECLARE_COMPARISON_KEYS(mb_equal_s8_keys)
MB_DECLARE_COMPARISON_KEYS(mb_not_equal_s8_keys)
MB_DECLARE_COMPARISON_KEYS(mb_less_s8_keys)
MB_DECLARE_COMPARISON_KEYS(mb_less_equal_s8_keys)
MB_DECLARE_COMPARISON_KEYS(mb_greater_s8_keys)
MB_DECLARE_COMPARISON_KEYS(mb_greater_equal_s8_keys)

#undef MB_DECLARE_COMPARISON_KEYS
#undef MB_DECLARE_COMPARISON

#endif
