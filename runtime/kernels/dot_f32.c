#include "microbuild/kernels/dot_f32.h"

#include <stddef.h>

/* On a Thumb-2 core whose FPU fuses (MB_F32_FUSED), eight x values and eight weights of a row are
 * fetched by one VLDM each, which C cannot ask GCC for (it emits one VLDR per float); the
 * multiply-adds stay one VFMA per term, in order of d within each row. Elsewhere (x86-64, soft
 * float, cores without FMA) the same sums run in plain C. */
#if MB_F32_FUSED && defined(__thumb2__)
#define MB_DOT_F32_VLDM 1
#else
#define MB_DOT_F32_VLDM 0
#endif

#if MB_DOT_F32_VLDM
/* Terms d..d+7 of two rows: x[d + i] is in s(8 + i), the first row's weights in s16..s23, the
 * second's in s24..s31; the rows' fused multiply-adds alternate, each row's in order of d. */
#define MB_DOT_F32_TWO_ROWS_OF_8(a, b)                                                         \
    "vfma.f32 %[" a "], s8, s16\n\tvfma.f32 %[" b "], s8, s24\n\t"                             \
    "vfma.f32 %[" a "], s9, s17\n\tvfma.f32 %[" b "], s9, s25\n\t"                             \
    "vfma.f32 %[" a "], s10, s18\n\tvfma.f32 %[" b "], s10, s26\n\t"                           \
    "vfma.f32 %[" a "], s11, s19\n\tvfma.f32 %[" b "], s11, s27\n\t"                           \
    "vfma.f32 %[" a "], s12, s20\n\tvfma.f32 %[" b "], s12, s28\n\t"                           \
    "vfma.f32 %[" a "], s13, s21\n\tvfma.f32 %[" b "], s13, s29\n\t"                           \
    "vfma.f32 %[" a "], s14, s22\n\tvfma.f32 %[" b "], s14, s30\n\t"                           \
    "vfma.f32 %[" a "], s15, s23\n\tvfma.f32 %[" b "], s15, s31\n\t"

/* The same for terms d..d+3: x in s8..s11, the rows' weights in s16..s19 and s24..s27. */
#define MB_DOT_F32_TWO_ROWS_OF_4(a, b)                                                         \
    "vfma.f32 %[" a "], s8, s16\n\tvfma.f32 %[" b "], s8, s24\n\t"                             \
    "vfma.f32 %[" a "], s9, s17\n\tvfma.f32 %[" b "], s9, s25\n\t"                             \
    "vfma.f32 %[" a "], s10, s18\n\tvfma.f32 %[" b "], s10, s26\n\t"                           \
    "vfma.f32 %[" a "], s11, s19\n\tvfma.f32 %[" b "], s11, s27\n\t"

#define MB_DOT_F32_CLOBBERS                                                                    \
    "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19", "s20",   \
        "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", "memory"

/* Four rows over the x values in `xs` (8 or 4 registers from s8), the rows' weights loaded two
 * rows at a time into `wa` and `wb` (from s16 and s24) and added by TWO_ROWS (one of the two
 * macros above); the asm moves x and the row pointers past the terms it has added. */
#define MB_DOT_F32_FOUR_ROWS(xs, wa, wb, TWO_ROWS)                                             \
    __asm__("vldmia %[x]!, {" xs "}\n\t"                                                       \
            "vldmia %[w0]!, {" wa "}\n\t"                                                      \
            "vldmia %[w1]!, {" wb "}\n\t" TWO_ROWS("s0", "s1")                                 \
            "vldmia %[w2]!, {" wa "}\n\t"                                                      \
            "vldmia %[w3]!, {" wb "}\n\t" TWO_ROWS("s2", "s3")                                 \
            : [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3),         \
              [s0] "+t"(s0), [s1] "+t"(s1), [s2] "+t"(s2), [s3] "+t"(s3)                       \
            :                                                                                  \
            : MB_DOT_F32_CLOBBERS)
#endif

/* The sums from 0 (mb_f32_dot4) or from sums[] (mb_f32_dot4_add): inlined into each, so the
 * former reads no sums from memory and costs what it did before the latter existed. */
static inline __attribute__((always_inline)) void dot4(const float *x, int32_t depth,
                                                       const float *const rows[4], float sums[4],
                                                       int from_sums)
{
    const float *w0 = rows[0], *w1 = rows[1], *w2 = rows[2], *w3 = rows[3];
    float s0 = from_sums ? sums[0] : 0.0f, s1 = from_sums ? sums[1] : 0.0f;
    float s2 = from_sums ? sums[2] : 0.0f, s3 = from_sums ? sums[3] : 0.0f;
    int32_t d = 0;
#if MB_DOT_F32_VLDM
    for (; d + 8 <= depth; d += 8) {
        MB_DOT_F32_FOUR_ROWS("s8-s15", "s16-s23", "s24-s31", MB_DOT_F32_TWO_ROWS_OF_8);
    }
    if (d + 4 <= depth) {
        MB_DOT_F32_FOUR_ROWS("s8-s11", "s16-s19", "s24-s27", MB_DOT_F32_TWO_ROWS_OF_4);
        d += 4;
    }
    depth -= d;
    d = 0;
#endif
    for (; d < depth; d++) {
        const float v = x[d];
        s0 = MB_F32_MULADD(s0, v, w0[d]);
        s1 = MB_F32_MULADD(s1, v, w1[d]);
        s2 = MB_F32_MULADD(s2, v, w2[d]);
        s3 = MB_F32_MULADD(s3, v, w3[d]);
    }
    sums[0] = s0;
    sums[1] = s1;
    sums[2] = s2;
    sums[3] = s3;
}

void mb_f32_dot4(const float *x, int32_t depth, const float *const rows[4], float sums[4])
{
    dot4(x, depth, rows, sums, 0);
}

void mb_f32_dot4_add(const float *x, int32_t depth, const float *const rows[4], float sums[4])
{
    dot4(x, depth, rows, sums, 1);
}

float mb_f32_dot1_add(float s, const float *x, int32_t depth, const float *w)
{
    int32_t d = 0;
#if MB_DOT_F32_VLDM
    for (; d + 8 <= depth; d += 8) {
        __asm__("vldmia %[x]!, {s8-s15}\n\t"
                "vldmia %[w]!, {s16-s23}\n\t"
                "vfma.f32 %[s], s8, s16\n\tvfma.f32 %[s], s9, s17\n\t"
                "vfma.f32 %[s], s10, s18\n\tvfma.f32 %[s], s11, s19\n\t"
                "vfma.f32 %[s], s12, s20\n\tvfma.f32 %[s], s13, s21\n\t"
                "vfma.f32 %[s], s14, s22\n\tvfma.f32 %[s], s15, s23\n\t"
                : [x] "+r"(x), [w] "+r"(w), [s] "+t"(s)
                :
                : MB_DOT_F32_CLOBBERS);
    }
    depth -= d;
    d = 0;
#endif
    for (; d < depth; d++) {
        s = MB_F32_MULADD(s, x[d], w[d]);
    }
    return s;
}

float mb_f32_dot1(const float *x, int32_t depth, const float *w)
{
    return mb_f32_dot1_add(0.0f, x, depth, w);
}
