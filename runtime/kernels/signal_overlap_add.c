#include "microbuild/kernels/signal_overlap_add.h"

#include "microbuild/kernels/signal_common.h"

/* One body for both types: ADD is the type's sum (saturating for int16). After a frame's sum,
 * the first 'step' samples go out, the rest move to the front and the tail is zeroed. */
#define OVERLAP_ADD_BODY(ADD)                                                                  \
    for (int32_t r = 0; r < rows; r++) {                                                       \
        for (int32_t f = 0; f < frames; f++) {                                                 \
            const int32_t frame = r * frames + f;                                              \
            for (int32_t i = 0; i < size; i++) {                                               \
                state[r * size + i] = ADD(state[r * size + i], input[frame * size + i]);       \
            }                                                                                  \
            for (int32_t i = 0; i < step; i++) {                                               \
                output[frame * step + i] = state[r * size + i];                                \
            }                                                                                  \
            for (int32_t i = 0; i < size; i++) {                                               \
                state[r * size + i] = i + step < size ? state[r * size + i + step] : 0;        \
            }                                                                                  \
        }                                                                                      \
    }

#define ADD_S16(a, b) mb_sig_sat16((int32_t)(a) + (int32_t)(b))
#define ADD_F32(a, b) ((a) + (b))

void mb_signal_overlap_add_s16(const int16_t *input, int16_t *state, int32_t rows,
                               int32_t frames, int32_t size, int32_t step, int16_t *output)
{
    OVERLAP_ADD_BODY(ADD_S16)
}

void mb_signal_overlap_add_f32(const float *input, float *state, int32_t rows, int32_t frames,
                               int32_t size, int32_t step, float *output)
{
    OVERLAP_ADD_BODY(ADD_F32)
}
