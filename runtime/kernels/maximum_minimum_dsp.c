/* MAXIMUM and MINIMUM (int8), Arm DSP variant "dsp": four bytes at a time. SSUB8 sets each byte's
 * GE flag where the first operand's byte is >= the second's (signed), SEL then takes that operand's
 * byte where GE is set and the other's elsewhere. For MAXIMUM the first operand is x (x >= y gives
 * x, else y); for MINIMUM the operands of SSUB8 are swapped (y >= x gives x, else y). Where x == y
 * both bytes are equal, so the result is TFLM's (x > y ? x : y, x < y ? x : y) byte for byte.
 * Rows where an operand is broadcast (stride 0) use that byte repeated four times; other strides
 * and the last n % 4 elements go one at a time. */
#if defined(__ARM_FEATURE_DSP)

#include <string.h>

#include "microbuild/kernels/maximum_minimum.h"

static inline uint32_t max4(uint32_t x, uint32_t y)
{
    uint32_t r;
    __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(x), "r"(y) : "cc");
    return r;
}

static inline uint32_t min4(uint32_t x, uint32_t y)
{
    uint32_t r;
    __asm__("ssub8 %0, %2, %1\n\tsel %0, %1, %2" : "=&r"(r) : "r"(x), "r"(y) : "cc");
    return r;
}

static inline uint32_t load4(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint32_t splat4(int8_t v)
{
    return (uint32_t)(uint8_t)v * 0x01010101u;
}

#define MAXMIN_ROW_DSP(NAME, OP4, CMP)                                                           \
    static void NAME(const void *params, const int8_t *a, int32_t a_step, const int8_t *b,       \
                     int32_t b_step, int8_t *out, int32_t n)                                     \
    {                                                                                            \
        int32_t i = 0;                                                                           \
        (void)params;                                                                            \
        if (a_step == 1 && b_step == 1) {                                                        \
            for (; i + 4 <= n; i += 4) {                                                         \
                const uint32_t r = OP4(load4(a + i), load4(b + i));                              \
                memcpy(out + i, &r, 4);                                                          \
            }                                                                                    \
        } else if (a_step == 1 && b_step == 0) {                                                 \
            const uint32_t y = splat4(b[0]);                                                     \
            for (; i + 4 <= n; i += 4) {                                                         \
                const uint32_t r = OP4(load4(a + i), y);                                         \
                memcpy(out + i, &r, 4);                                                          \
            }                                                                                    \
        } else if (a_step == 0 && b_step == 1) {                                                 \
            const uint32_t x = splat4(a[0]);                                                     \
            for (; i + 4 <= n; i += 4) {                                                         \
                const uint32_t r = OP4(x, load4(b + i));                                         \
                memcpy(out + i, &r, 4);                                                          \
            }                                                                                    \
        }                                                                                        \
        for (; i < n; i++) {                                                                     \
            const int8_t x = a[i * a_step];                                                      \
            const int8_t y = b[i * b_step];                                                      \
            out[i] = x CMP y ? x : y;                                                            \
        }                                                                                        \
    }

MAXMIN_ROW_DSP(maximum_row_dsp, max4, >)
MAXMIN_ROW_DSP(minimum_row_dsp, min4, <)

void mb_maximum_s8_dsp(const mb_broadcast_shape *shape, const int8_t *input1,
                       const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, maximum_row_dsp, 0);
}

void mb_minimum_s8_dsp(const mb_broadcast_shape *shape, const int8_t *input1,
                       const int8_t *input2, int8_t *output, void *scratch)
{
    (void)scratch;
    mb_broadcast_binary_s8(shape, input1, input2, output, minimum_row_dsp, 0);
}

#else
typedef int mb_maximum_minimum_dsp_unused;
#endif
