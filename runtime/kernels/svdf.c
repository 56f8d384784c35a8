#include "microbuild/kernels/svdf.h"

#include "microbuild/quant.h"

/* TFLM's sums are plain int32 additions, which wrap on every target it runs on when a full-range
 * int16 state meets large time weights; adding as uint32 gives the same bits without the
 * undefined behaviour. */
static inline int32_t add_wrapping(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* One body for both state types: T is the state and time-weight type, LO/HI its range. */
#define MB_SVDF_BODY(T, LO, HI)                                                                  \
    const int32_t filters = p->filters, memory = p->memory;                                     \
    int32_t *const filter_sums = (int32_t *)scratch;                 /* batches x filters */    \
    int32_t *const unit_sums = filter_sums + p->batches * filters;   /* batches x units */      \
    /* Shift every state row left by one: the oldest value goes, a slot frees up at the end. */ \
    const int32_t state_size = p->batches * filters * memory;                                   \
    for (int32_t i = 0; i + 1 < state_size; i++) {                                              \
        state[i] = state[i + 1];                                                                \
    }                                                                                           \
    /* The newest value of each filter: its weights . input, rescaled to the state's scale. */ \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const int8_t *in = input + b * p->input_size;                                           \
        T *newest = state + b * filters * memory + (memory - 1);                                \
        for (int32_t f = 0; f < filters; f++) {                                                 \
            const int8_t *w = weights_feature + f * p->input_size;                              \
            int32_t acc = 0;                                                                    \
            for (int32_t c = 0; c < p->input_size; c++) {                                       \
                acc = add_wrapping(acc, (int32_t)w[c] * ((int32_t)in[c] - p->input_zero_point)); \
            }                                                                                   \
            acc = mb_mul_by_quantized_multiplier(acc, p->scale1_multiplier, p->scale1_shift);   \
            /* Clamped to T, then offset by the state's zero point and narrowed to T: an int8  \
             * state wraps where the sum leaves int8, as in the tflite-micro interpreter this   \
             * is checked against (later TFLM adds the zero point before clamping). */          \
            newest[f * memory] = (T)(p->state_zero_point + mb_clamp_i32(acc, LO, HI));          \
        }                                                                                       \
    }                                                                                           \
    /* Each filter's memory . its time weights. */                                             \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const T *row = state + b * filters * memory;                                            \
        const T *w = weights_time;                                                              \
        for (int32_t f = 0; f < filters; f++) {                                                 \
            int32_t acc = 0;                                                                    \
            for (int32_t m = 0; m < memory; m++) {                                              \
                acc = add_wrapping(acc, (int32_t)*w++ * ((int32_t)*row++ - p->state_zero_point)); \
            }                                                                                   \
            filter_sums[b * filters + f] = acc;                                                 \
        }                                                                                       \
    }                                                                                           \
    /* Bias plus rank filters per unit, rescaled to int8. */                                   \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        const int32_t *sums = filter_sums + b * filters;                                        \
        for (int32_t u = 0; u < p->units; u++) {                                                \
            int32_t acc = bias[u];                                                              \
            for (int32_t r = 0; r < p->rank; r++) {                                             \
                acc = add_wrapping(acc, *sums++);                                               \
            }                                                                                   \
            unit_sums[b * p->units + u] = acc;                                                  \
        }                                                                                       \
    }                                                                                           \
    for (int32_t i = 0; i < p->batches * p->units; i++) {                                      \
        const int32_t y = mb_mul_by_quantized_multiplier(unit_sums[i], p->scale2_multiplier,   \
                                                         p->scale2_shift) +                     \
                          p->output_zero_point;                                                 \
        output[i] = (int8_t)mb_clamp_i32(y, -128, 127);                                         \
    }

void mb_svdf_s8_s16(const mb_svdf_params *p, const int8_t *input, const int8_t *weights_feature,
                    const int16_t *weights_time, const int32_t *bias, int16_t *state,
                    int8_t *output, void *scratch)
{
    MB_SVDF_BODY(int16_t, -32768, 32767)
}

void mb_svdf_s8_s8(const mb_svdf_params *p, const int8_t *input, const int8_t *weights_feature,
                   const int8_t *weights_time, const int32_t *bias, int8_t *state,
                   int8_t *output, void *scratch)
{
    MB_SVDF_BODY(int8_t, -128, 127)
}
