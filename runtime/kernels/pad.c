#include "microbuild/kernels/pad.h"

static void fill8(int8_t *out, int32_t n, int8_t value)
{
    for (int32_t i = 0; i < n; i++) {
        out[i] = value;
    }
}

static void fill16(int16_t *out, int32_t n, int16_t value)
{
    for (int32_t i = 0; i < n; i++) {
        out[i] = value;
    }
}

/* One walk for both element types: NAME, the element type T and FILL, its fill function. */
#define MB_PAD_KERNEL(NAME, T, FILL)                                                               \
void NAME(const mb_pad_s8_params *p, const T *input, T *output)                                    \
{                                                                                                  \
    enum { D = MB_PAD_MAX_DIMS, LAST = MB_PAD_MAX_DIMS - 1 };                                      \
    int32_t out_dims[D];                                                                           \
    for (int i = 0; i < D; i++) {                                                                  \
        out_dims[i] = p->pad_before[i] + p->input_dims[i] + p->pad_after[i];                       \
    }                                                                                              \
    const int32_t row = out_dims[LAST];                                                            \
                                                                                                   \
    /* Walk the output one innermost row at a time: a row outside the input in any outer dimension \
     * is all padding; otherwise it is left padding, one input row, right padding. Input rows are  \
     * consumed in order, so the input is read sequentially. */                                    \
    const T *in = input;                                                                           \
    T *out = output;                                                                               \
    int32_t idx[D - 1] = {0, 0, 0, 0};                                                             \
    for (;;) {                                                                                     \
        int inside = 1;                                                                            \
        for (int i = 0; i < LAST; i++) {                                                           \
            if (idx[i] < p->pad_before[i] || idx[i] >= p->pad_before[i] + p->input_dims[i]) {      \
                inside = 0;                                                                        \
            }                                                                                      \
        }                                                                                          \
        if (inside) {                                                                              \
            FILL(out, p->pad_before[LAST], (T)p->pad_value);                                       \
            out += p->pad_before[LAST];                                                            \
            for (int32_t i = 0; i < p->input_dims[LAST]; i++) {                                    \
                *out++ = *in++;                                                                    \
            }                                                                                      \
            FILL(out, p->pad_after[LAST], (T)p->pad_value);                                        \
            out += p->pad_after[LAST];                                                             \
        } else {                                                                                   \
            FILL(out, row, (T)p->pad_value);                                                       \
            out += row;                                                                            \
        }                                                                                          \
        /* Advance the outer index like an odometer, last outer dimension fastest. */              \
        int i = LAST - 1;                                                                          \
        while (i >= 0 && ++idx[i] == out_dims[i]) {                                                \
            idx[i] = 0;                                                                            \
            i--;                                                                                   \
        }                                                                                          \
        if (i < 0) {                                                                               \
            break;                                                                                 \
        }                                                                                          \
    }                                                                                              \
}

MB_PAD_KERNEL(mb_pad_s8, int8_t, fill8)
MB_PAD_KERNEL(mb_pad_s16, int16_t, fill16)
