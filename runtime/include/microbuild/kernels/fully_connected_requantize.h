/* The requantization step shared by the FULLY_CONNECTED kernel variants (fully_connected_dsp.c,
 * fully_connected_mve.c, fully_connected_portable.c): one output row's int32 sum to its int8
 * value, exactly as the reference kernel. */
#ifndef MICROBUILD_KERNELS_FULLY_CONNECTED_REQUANTIZE_H
#define MICROBUILD_KERNELS_FULLY_CONNECTED_REQUANTIZE_H

#include <stddef.h>
#include <stdint.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/quant.h"

/* mb_mul_by_quantized_multiplier (quant.h), exact for the positive multipliers the compiler
 * emits, in fewer instructions: the high multiply as in quant_fast.h, then the reference's own
 * rounding right shift in 32 bits (no 64-bit variable shift). */
static inline int32_t mb_fc_rescale(int32_t acc, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int64_t product = (int64_t)(int32_t)((uint32_t)acc << left) * multiplier;
    const int32_t high = (int32_t)((product + ((int64_t)1 << 30)) >> 31);
    const int32_t mask = (int32_t)(((uint32_t)1 << right) - 1u);
    const int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
    return (high >> right) + ((high & mask) > threshold ? 1 : 0);
}

/* Row c's sum acc as the op's int8 output: per-channel or per-tensor requantization, the output
 * offset, the activation range. Static, not inline: the including kernel's compiler decides
 * whether to inline it, as it did when each kernel kept its own copy. */
static int8_t mb_fc_requantize(const mb_fully_connected_s8_params *p, int32_t c, int32_t acc)
{
    int32_t multiplier = p->output_multiplier;
    int32_t shift = p->output_shift;
    if (p->output_multipliers != NULL) {
        multiplier = p->output_multipliers[c];
        shift = p->output_shifts[c];
    }
    const int32_t out = mb_fc_rescale(acc, multiplier, shift) + p->output_offset;
    return (int8_t)mb_clamp_i32(out, p->activation_min, p->activation_max);
}

#endif
