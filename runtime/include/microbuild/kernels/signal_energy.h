/* SignalEnergy (TFLM signal library): the squared magnitude re^2 + im^2 (uint32) of complex
 * int16 bins start_index .. end_index - 1. TFLM leaves the other output elements unwritten
 * (whatever the arena held); this kernel writes 0 there, so they are at least defined. */
#ifndef MICROBUILD_KERNELS_SIGNAL_ENERGY_H
#define MICROBUILD_KERNELS_SIGNAL_ENERGY_H

#include <stdint.h>

void mb_signal_energy(const int16_t *input, int32_t start_index, int32_t end_index,
                      int32_t size, uint32_t *output);

#endif
