/* The requantization step shared by the FULLY_CONNECTED kernel variants (fully_connected_dsp.c,
 * fully_connected_mve.c, fully_connected_portable.c): one output row's int32 sum to its int8
 * value, exactly as the reference kernel (the rescaling: quant_fast.h's mb_requantize_fast32). */
#ifndef MICROBUILD_KERNELS_FULLY_CONNECTED_REQUANTIZE_H
#define MICROBUILD_KERNELS_FULLY_CONNECTED_REQUANTIZE_H

#include <stddef.h>
#include <stdint.h>

#include "microbuild/kernels/fully_connected.h"
#include "microbuild/quant.h"
#include "microbuild/quant_fast.h"

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
    const int32_t out = mb_requantize_fast32(acc, multiplier, shift) + p->output_offset;
    return (int8_t)mb_clamp_i32(out, p->activation_min, p->activation_max);
}

#endif
