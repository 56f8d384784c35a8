/* Int8 SVDF (singular value decomposition filter: the keyword spotters' streaming layer), with an
 * int16 or int8 activation state and time weights, bit-exact with TFLM's integer reference.
 *
 * Per invocation: the state (batches x filters x memory values, the model's variable tensor,
 * kept between invocations) shifts left by one value; each filter's dot product with the input,
 * rescaled (scale 1), clamped and offset by the state's zero point, is written as its newest
 * value (narrowed to the state type: an int8 state with a zero point can wrap, as in TFLM); each
 * filter's state row is dotted with its time weights; rank consecutive filters and the bias add
 * up to one unit, rescaled (scale 2) to the int8 output. Like TFLM's integer kernel, no fused
 * activation is applied beyond the int8 clamp. */
#ifndef MICROBUILD_KERNELS_SVDF_H
#define MICROBUILD_KERNELS_SVDF_H

#include <stdint.h>

typedef struct {
    int32_t batches;
    int32_t input_size;
    int32_t filters;     /* units x rank */
    int32_t units;
    int32_t rank;
    int32_t memory;      /* time steps each filter remembers */
    int32_t input_zero_point;
    int32_t state_zero_point;
    int32_t output_zero_point;
    int32_t scale1_multiplier; /* input x feature weights -> state */
    int32_t scale1_shift;
    int32_t scale2_multiplier; /* state x time weights -> output */
    int32_t scale2_shift;
    /* Bit 0: every feature sum, bit 1: every time sum, shifted left by its scale's left shift
     * + 1, fits in int32 (the compiler's bound): the dsp_wide kernel then rescales those sums
     * with SMMULR. */
    int32_t small_sums;
} mb_svdf_params;

/* scratch: (batches x filters + batches x units) int32 values. */
void mb_svdf_s8_s16(const mb_svdf_params *params, const int8_t *input,
                    const int8_t *weights_feature, const int16_t *weights_time,
                    const int32_t *bias, int16_t *state, int8_t *output, void *scratch);
void mb_svdf_s8_s8(const mb_svdf_params *params, const int8_t *input,
                   const int8_t *weights_feature, const int8_t *weights_time,
                   const int32_t *bias, int8_t *state, int8_t *output, void *scratch);

/* The variants (svdf_fast.c): "dsp" and "dsp_wide" (Arm DSP; dsp_wide's feature weights are
 * int16, widened at compile time) and "mve" (Helium). The reference's arguments, then folds:
 * filters + units int32 values from the compiler, -input_zero_point x each filter's
 * feature-weight sum, then -state_zero_point x the time-weight sum of each unit's rank filters;
 * then scratch: at least 2 x input_size + 8 bytes (the DSP's widened input). */
void mb_svdf_s8_s16_dsp(const mb_svdf_params *params, const int8_t *input,
                        const int8_t *weights_feature, const int16_t *weights_time,
                        const int32_t *bias, int16_t *state, int8_t *output,
                        const int32_t *folds, void *scratch);
void mb_svdf_s8_s8_dsp(const mb_svdf_params *params, const int8_t *input,
                       const int8_t *weights_feature, const int8_t *weights_time,
                       const int32_t *bias, int8_t *state, int8_t *output,
                       const int32_t *folds, void *scratch);
void mb_svdf_s8_s16_dsp_wide(const mb_svdf_params *params, const int8_t *input,
                             const int8_t *weights_feature, const int16_t *weights_time,
                             const int32_t *bias, int16_t *state, int8_t *output,
                             const int32_t *folds, void *scratch);
void mb_svdf_s8_s8_dsp_wide(const mb_svdf_params *params, const int8_t *input,
                            const int8_t *weights_feature, const int8_t *weights_time,
                            const int32_t *bias, int8_t *state, int8_t *output,
                            const int32_t *folds, void *scratch);
void mb_svdf_s8_s16_mve(const mb_svdf_params *params, const int8_t *input,
                        const int8_t *weights_feature, const int16_t *weights_time,
                        const int32_t *bias, int16_t *state, int8_t *output,
                        const int32_t *folds, void *scratch);
void mb_svdf_s8_s8_mve(const mb_svdf_params *params, const int8_t *input,
                       const int8_t *weights_feature, const int8_t *weights_time,
                       const int32_t *bias, int8_t *state, int8_t *output,
                       const int32_t *folds, void *scratch);

#endif
