/* FULLY_CONNECTED, Arm DSP variant "dsp" (Cortex-M4/M7/M33/M55): SMLAD on sign-extended pairs,
 * four output rows per pass over the input.
 *
 * Weights are pre-arranged at compile time (arrange_rows(4, 4)): for every group of four rows,
 * the whole 4-byte chunks of the depth come chunk by chunk, each chunk holding the four rows'
 * 4 bytes one after the other ([depth / 4][4 rows][4]); then the group's last depth % 4 bytes,
 * row after row ([4 rows][depth % 4]); rows left over (output_depth % 4) follow as stored.
 * Same size as the original weights.
 *
 * One 32-bit load brings 4 int8 values; SXTB16 sign-extends bytes 0 and 2 into two int16 halves,
 * SXTB16 with ROR #8 bytes 1 and 3. The input word is split once and feeds all four rows, whose
 * words are split the same way, so SMLAD adds x0*w0 + x2*w2 and x1*w1 + x3*w3: int8 x int8
 * products summed in int32, exactly as the reference (in another order). */
#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "microbuild/asm_function.h"
#include "microbuild/dsp_words.h"
#include "microbuild/kernels/fully_connected.h"
#include "microbuild/kernels/fully_connected_requantize.h"
#include "microbuild/quant.h"

/* Two words of weights: any alignment (two LDR), or 8-byte aligned (one LDRD). */
static inline void fc_load2(const int8_t *p, uint32_t *a, uint32_t *b)
{
    *a = mb_load32(p);
    *b = mb_load32(p + 4);
}

static inline void fc_load2_aligned(const int8_t *p, uint32_t *a, uint32_t *b)
{
    uint64_t v;
    memcpy(&v, __builtin_assume_aligned(p, 8), 8);
    *a = (uint32_t)v;
    *b = (uint32_t)(v >> 32);
}

/* One 4-byte chunk of the input against the four rows' chunks (16 MACs). */
#define FC_DSP_CHUNK4(k, LOAD2)                                                                   \
    {                                                                                             \
        const uint32_t xv = mb_load32(x + 4 * (k));                                               \
        const int32_t xe = mb_even16(xv);                                                           \
        const int32_t xo = mb_odd16(xv);                                                            \
        uint32_t w0, w1, w2, w3;                                                                  \
        LOAD2(w + 16 * (k), &w0, &w1);                                                            \
        LOAD2(w + 16 * (k) + 8, &w2, &w3);                                                        \
        acc0 = __smlad(mb_even16(w0), xe, acc0);                                                    \
        acc0 = __smlad(mb_odd16(w0), xo, acc0);                                                     \
        acc1 = __smlad(mb_even16(w1), xe, acc1);                                                    \
        acc1 = __smlad(mb_odd16(w1), xo, acc1);                                                     \
        acc2 = __smlad(mb_even16(w2), xe, acc2);                                                    \
        acc2 = __smlad(mb_odd16(w2), xo, acc2);                                                     \
        acc3 = __smlad(mb_even16(w3), xe, acc3);                                                    \
        acc3 = __smlad(mb_odd16(w3), xo, acc3);                                                     \
    }

/* ---- the fast path: whole groups, depth a multiple of 4, the requantization table --------------
 * When the compiler emitted params->requant (its short requantization is exact for this op), the
 * depth is a multiple of 4 and the weights are word-aligned, one call per input row runs every
 * group of 4 output rows: the 4 sums from the bias, the whole chunks, then the 4 outputs
 * requantized from the table and stored as one word. On Thumb-2 that is a function in assembly
 * (it needs all 14 allocatable registers: weights r0-r3, sums r4-r7, the input word's halves
 * r8-r9, input and weight pointers r10-r11, the loop's end r12, the input word lr), its loop eight
 * chunks per pass after the depth / 4 % 8 single chunks: per 16 multiply-accumulates, dsp runs
 * LDR + 2 SXTB16 (input) + LDM (the 4 rows' words) + 8 SXTB16 + 8 SMLAD = 20 instructions,
 * dsp_wide LDR + 2 SXTB16 + 2 LDM + 8 SMLAD = 13.
 * Given scratch (the compiler gives a short input row 2 * depth bytes, fully_connected.py's
 * widened_input_scratch), the row is first widened once into it as the int16 pairs (x0, x2),
 * (x1, x3) of every chunk, and each chunk's input is then one LDRD for every group: 18 and 11
 * instructions per 16 multiply-accumulates.
 * Requantization per row (table words m2 = 2 * multiplier - 2^32, offset, right + 1, see
 * dsp_requant_table): hi = SMMLAR(acc, m2, acc) = (acc * 2 * multiplier + 2^31) >> 32, then
 * out = SSAT8((2 * hi + offset - (hi < 0)) >> (right + 1)),
 * then for an activation narrower than int8 a byte-wise clamp of the packed word (SSUB8 + SEL). */
typedef struct {
    /* The input row: int8, or widened (4 int16 per chunk, "_xw" functions); 4 or 8 bytes a chunk */
    const void *x;          /*  0: the input row */
    const void *x_octs;     /*  4: where the 8-chunk loop starts (after depth / 4 % 8 chunks) */
    const void *x_end;      /*  8: the row's end */
    const int32_t *bias;    /* 12: the first group's */
    const int32_t *requant; /* 16: the first group's table rows */
    int8_t *y;              /* 20: the first group's outputs */
    int32_t groups;         /* 24: >= 1 */
    uint32_t amin4, amax4;  /* 28: the activation range in each byte (clamping form only) */
    const void *w;          /* 36: the first group's weights, word-aligned */
} fc_groups_job;

void mb_fc_dsp_groups(const fc_groups_job *j);
void mb_fc_dsp_groups_clamp(const fc_groups_job *j);
void mb_fc_dsp_wide_groups(const fc_groups_job *j);
void mb_fc_dsp_wide_groups_clamp(const fc_groups_job *j);
void mb_fc_dsp_groups_xw(const fc_groups_job *j);
void mb_fc_dsp_groups_clamp_xw(const fc_groups_job *j);
void mb_fc_dsp_wide_groups_xw(const fc_groups_job *j);
void mb_fc_dsp_wide_groups_clamp_xw(const fc_groups_job *j);

/* A row's sum to int8 (before the activation range) with the requantization table: what
 * FC_ASM_REQUANTIZE does (dsp_requant_table in microbuild/compiler/ops/fully_connected.py says
 * why it equals the reference), used by every path once the table exists: the rows the groups
 * leave over and a depth that is not a multiple of 4 too, where the generic requantization
 * costs about 35 instructions per row (a 64-bit multiply and both shift directions). */
static inline int32_t fc_table_requantize(const int32_t *t, int32_t acc)
{
    int32_t hi;
    __asm__("smmlar %0, %1, %2, %1" : "=r"(hi) : "r"(acc), "r"(t[0]));
    const int32_t sum = (int32_t)(((uint32_t)hi << 1) + (uint32_t)t[1] - ((uint32_t)hi >> 31));
    return __ssat(sum >> t[2], 8);
}

/* MB_CONV2D_DSP_C_BLOCKS selects the C form below on Thumb-2 too (the tests run it that way). */
#if defined(__thumb2__) && !defined(MB_CONV2D_DSP_C_BLOCKS)
/* A chunk's input halves (x0, x2) in r8 and (x1, x3) in r9: from the int8 row, or the widened. */
#define FC_ASM_INPUT_S8                                                                         \
    "ldr    lr, [r10], #4\n\t"                                                                  \
    "sxtb16 r8, lr\n\t"                                                                         \
    "sxtb16 r9, lr, ror #8\n\t"
#define FC_ASM_INPUT_WIDENED "ldrd   r8, r9, [r10], #8\n\t"

#define FC_ASM_CHUNK_DSP                                                                        \
    "ldm    r11!, {r0, r1, r2, r3}\n\t"                                                         \
    "sxtb16 lr, r0\n\t"                                                                         \
    "smlad  r4, lr, r8, r4\n\t"                                                                 \
    "sxtb16 r0, r0, ror #8\n\t"                                                                 \
    "smlad  r4, r0, r9, r4\n\t"                                                                 \
    "sxtb16 lr, r1\n\t"                                                                         \
    "smlad  r5, lr, r8, r5\n\t"                                                                 \
    "sxtb16 r1, r1, ror #8\n\t"                                                                 \
    "smlad  r5, r1, r9, r5\n\t"                                                                 \
    "sxtb16 lr, r2\n\t"                                                                         \
    "smlad  r6, lr, r8, r6\n\t"                                                                 \
    "sxtb16 r2, r2, ror #8\n\t"                                                                 \
    "smlad  r6, r2, r9, r6\n\t"                                                                 \
    "sxtb16 lr, r3\n\t"                                                                         \
    "smlad  r7, lr, r8, r7\n\t"                                                                 \
    "sxtb16 r3, r3, ror #8\n\t"                                                                 \
    "smlad  r7, r3, r9, r7\n\t"

/* Each row's chunk is the words (w0, w2) and (w1, w3) as int16 pairs. */
#define FC_ASM_CHUNK_WIDE                                                                       \
    "ldm    r11!, {r0, r1, r2, r3}\n\t"                                                         \
    "smlad  r4, r0, r8, r4\n\t"                                                                 \
    "smlad  r4, r1, r9, r4\n\t"                                                                 \
    "smlad  r5, r2, r8, r5\n\t"                                                                 \
    "smlad  r5, r3, r9, r5\n\t"                                                                 \
    "ldm    r11!, {r0, r1, r2, r3}\n\t"                                                         \
    "smlad  r6, r0, r8, r6\n\t"                                                                 \
    "smlad  r6, r1, r9, r6\n\t"                                                                 \
    "smlad  r7, r2, r8, r7\n\t"                                                                 \
    "smlad  r7, r3, r9, r7\n\t"

/* Sum A to its int8 output (sign-extended in A); the table pointer in lr, r0-r3 and r8 free. */
#define FC_ASM_REQUANTIZE(A)                                                                    \
    "ldm    lr!, {r0, r1, r2}\n\t"                                                              \
    "smmlar " A ", " A ", r0, " A "\n\t"                                                        \
    "add    r8, r1, " A ", lsl #1\n\t"                                                          \
    "sub    r8, r8, " A ", lsr #31\n\t"                                                         \
    "asr    r8, r8, r2\n\t"                                                                     \
    "ssat   " A ", #8, r8\n\t"

#define FC_ASM_NO_CLAMP ""
#define FC_ASM_CLAMP                                                                            \
    "ldrd   r0, r1, [sp, #28]\n\t"                                                              \
    "ssub8  r2, r4, r0\n\t"  /* GE per byte where the output >= amin */                         \
    "sel    r4, r4, r0\n\t"                                                                     \
    "ssub8  r2, r1, r4\n\t"  /* GE per byte where amax >= the output */                         \
    "sel    r4, r4, r1\n\t"

/* The job is copied to the stack frame (9 words), the group's pointers advance there. */
#define FC_ASM_GROUPS(NAME, INPUT, CHUNK, CLAMP)                                                \
    __asm__(MB_THUMB_FUNCTION_BEGIN(NAME)                                                       \
            "push   {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"                                 \
            "sub    sp, sp, #36\n\t"  /* 8-byte aligned with the 9 registers */                 \
            "ldr    r11, [r0, #36]\n\t"                                                         \
            "ldm    r0, {r1, r2, r3, r4, r5, r6, r7, r8, r9}\n\t"                               \
            "stm    sp, {r1, r2, r3, r4, r5, r6, r7, r8, r9}\n"                                 \
            ".L" NAME "_group:\n\t"                                                             \
            "ldr    r12, [sp, #12]\n\t"                                                         \
            "ldm    r12!, {r4, r5, r6, r7}\n\t"                                                 \
            "str    r12, [sp, #12]\n\t"                                                         \
            "ldrd   r10, r12, [sp]\n\t"                                                         \
            "cmp    r10, r12\n\t"                                                               \
            "beq    .L" NAME "_octs\n"                                                         \
            ".L" NAME "_single:\n\t"                                                            \
            INPUT CHUNK                                                                         \
            "cmp    r10, r12\n\t"                                                               \
            "bne    .L" NAME "_single\n"                                                        \
            ".L" NAME "_octs:\n\t"                                                             \
            "ldr    r12, [sp, #8]\n\t"                                                          \
            "cmp    r10, r12\n\t"                                                               \
            "beq    .L" NAME "_requantize\n"                                                    \
            ".L" NAME "_quad:\n\t"                                                              \
            ".rept  8\n\t" INPUT CHUNK ".endr\n\t"                                              \
            "cmp    r10, r12\n\t"                                                               \
            "bne    .L" NAME "_quad\n"                                                          \
            ".L" NAME "_requantize:\n\t"                                                        \
            "ldr    lr, [sp, #16]\n\t"                                                          \
            FC_ASM_REQUANTIZE("r4") FC_ASM_REQUANTIZE("r5")                                     \
            FC_ASM_REQUANTIZE("r6") FC_ASM_REQUANTIZE("r7")                                     \
            "str    lr, [sp, #16]\n\t"                                                          \
            "bfi    r4, r5, #8, #8\n\t"                                                         \
            "bfi    r4, r6, #16, #8\n\t"                                                        \
            "bfi    r4, r7, #24, #8\n\t"                                                        \
            CLAMP                                                                               \
            "ldrd   r0, r1, [sp, #20]\n\t"                                                      \
            "str    r4, [r0], #4\n\t"  /* 4 rows' bytes: STR may be unaligned here */           \
            "subs   r1, r1, #1\n\t"                                                             \
            "strd   r0, r1, [sp, #20]\n\t"                                                      \
            "bne    .L" NAME "_group\n\t"                                                       \
            "add    sp, sp, #36\n\t"                                                            \
            "pop    {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t"                                 \
            MB_THUMB_FUNCTION_END(NAME))

FC_ASM_GROUPS("mb_fc_dsp_groups", FC_ASM_INPUT_S8, FC_ASM_CHUNK_DSP, FC_ASM_NO_CLAMP);
FC_ASM_GROUPS("mb_fc_dsp_groups_clamp", FC_ASM_INPUT_S8, FC_ASM_CHUNK_DSP, FC_ASM_CLAMP);
FC_ASM_GROUPS("mb_fc_dsp_wide_groups", FC_ASM_INPUT_S8, FC_ASM_CHUNK_WIDE, FC_ASM_NO_CLAMP);
FC_ASM_GROUPS("mb_fc_dsp_wide_groups_clamp", FC_ASM_INPUT_S8, FC_ASM_CHUNK_WIDE, FC_ASM_CLAMP);
FC_ASM_GROUPS("mb_fc_dsp_groups_xw", FC_ASM_INPUT_WIDENED, FC_ASM_CHUNK_DSP, FC_ASM_NO_CLAMP);
FC_ASM_GROUPS("mb_fc_dsp_groups_clamp_xw", FC_ASM_INPUT_WIDENED, FC_ASM_CHUNK_DSP, FC_ASM_CLAMP);
FC_ASM_GROUPS("mb_fc_dsp_wide_groups_xw", FC_ASM_INPUT_WIDENED, FC_ASM_CHUNK_WIDE,
              FC_ASM_NO_CLAMP);
FC_ASM_GROUPS("mb_fc_dsp_wide_groups_clamp_xw", FC_ASM_INPUT_WIDENED, FC_ASM_CHUNK_WIDE,
              FC_ASM_CLAMP);
#else
/* The same in C, for a DSP core compiled to the Arm (not Thumb) instruction set. */
static void fc_groups_c(const fc_groups_job *j, int wide, int widened, int32_t amin,
                        int32_t amax)
{
    const int32_t *bias = j->bias;
    const int32_t *t = j->requant;
    int8_t *y = j->y;
    const int8_t *w = (const int8_t *)j->w;
    const int32_t step = widened ? 8 : 4;
    for (int32_t g = 0; g < j->groups; g++, bias += 4, y += 4) {
        int32_t acc[4] = {bias[0], bias[1], bias[2], bias[3]};
        for (const int8_t *x = j->x; x != (const int8_t *)j->x_end; x += step) {
            int32_t xe, xo;
            if (widened) {
                memcpy(&xe, x, 4);
                memcpy(&xo, x + 4, 4);
            } else {
                const uint32_t xv = mb_load32(x);
                xe = mb_even16(xv);
                xo = mb_odd16(xv);
            }
            for (int32_t r = 0; r < 4; r++) {
                uint32_t a, b;
                if (wide) {
                    memcpy(&a, w + 8 * r, 4);
                    memcpy(&b, w + 8 * r + 4, 4);
                } else {
                    const uint32_t wv = mb_load32(w + 4 * r);
                    a = (uint32_t)mb_even16(wv);
                    b = (uint32_t)mb_odd16(wv);
                }
                acc[r] = __smlad((int32_t)a, xe, acc[r]);
                acc[r] = __smlad((int32_t)b, xo, acc[r]);
            }
            w += wide ? 32 : 16;
        }
        for (int32_t r = 0; r < 4; r++, t += 3) {
            y[r] = (int8_t)mb_clamp_i32(fc_table_requantize(t, acc[r]), amin, amax);
        }
    }
}

void mb_fc_dsp_groups(const fc_groups_job *j)
{
    fc_groups_c(j, 0, 0, -128, 127);
}

void mb_fc_dsp_groups_clamp(const fc_groups_job *j)
{
    fc_groups_c(j, 0, 0, (int8_t)j->amin4, (int8_t)j->amax4);
}

void mb_fc_dsp_wide_groups(const fc_groups_job *j)
{
    fc_groups_c(j, 1, 0, -128, 127);
}

void mb_fc_dsp_wide_groups_clamp(const fc_groups_job *j)
{
    fc_groups_c(j, 1, 0, (int8_t)j->amin4, (int8_t)j->amax4);
}

void mb_fc_dsp_groups_xw(const fc_groups_job *j)
{
    fc_groups_c(j, 0, 1, -128, 127);
}

void mb_fc_dsp_groups_clamp_xw(const fc_groups_job *j)
{
    fc_groups_c(j, 0, 1, (int8_t)j->amin4, (int8_t)j->amax4);
}

void mb_fc_dsp_wide_groups_xw(const fc_groups_job *j)
{
    fc_groups_c(j, 1, 1, -128, 127);
}

void mb_fc_dsp_wide_groups_clamp_xw(const fc_groups_job *j)
{
    fc_groups_c(j, 1, 1, (int8_t)j->amin4, (int8_t)j->amax4);
}
#endif

/* One row's sum to its output when the fast path does not run (the rows left over, a depth not
 * a multiple of 4, unaligned weights): from the table when there is one. */
static int8_t fc_requantize(const mb_fully_connected_s8_params *p, int32_t c, int32_t acc)
{
    if (p->requant == NULL) {
        return mb_fc_requantize(p, c, acc);
    }
    return (int8_t)mb_clamp_i32(fc_table_requantize(p->requant + 3 * c, acc),
                                p->activation_min, p->activation_max);
}

/* The input row as every chunk's int16 pairs (x0, x2), (x1, x3): what SXTB16 and SXTB16 ROR #8
 * make of the chunk's word, done here once instead of once per group of 4 rows. */
static void fc_widen_row(const int8_t *x, int32_t depth, int32_t *widened)
{
    for (int32_t k = 0; k < depth; k += 4, widened += 2) {
        const uint32_t xv = mb_load32(x + k);
        widened[0] = mb_even16(xv);
        widened[1] = mb_odd16(xv);
    }
}

/* Runs the fast path over every group of every input row and returns 1, or returns 0 when it
 * does not apply. Scratch (2 * depth bytes, word-aligned) or NULL: see fc_widen_row. */
/* Inlined into each variant with wide constant, so each links only its own four functions. */
static inline __attribute__((always_inline)) int
fc_groups(const mb_fully_connected_s8_params *params, const int8_t *input,
                     const void *weights, const int32_t *bias, int8_t *output, int wide,
                     void *scratch)
{
    const int32_t depth = params->input_depth;
    const int32_t groups = params->output_depth / 4;
    if (params->requant == NULL || (depth & 3) != 0 || depth == 0 || groups == 0 ||
        ((uintptr_t)weights & 3u) != 0) {
        return 0;
    }
    const int clamp = params->activation_min > -128 || params->activation_max < 127;
    const uint32_t amin4 = (uint8_t)params->activation_min * 0x01010101u;
    const uint32_t amax4 = (uint8_t)params->activation_max * 0x01010101u;
    const int widened = scratch != NULL;
    void (*const run)(const fc_groups_job *) =
        wide ? (widened ? (clamp ? mb_fc_dsp_wide_groups_clamp_xw : mb_fc_dsp_wide_groups_xw)
                        : (clamp ? mb_fc_dsp_wide_groups_clamp : mb_fc_dsp_wide_groups))
             : (widened ? (clamp ? mb_fc_dsp_groups_clamp_xw : mb_fc_dsp_groups_xw)
                        : (clamp ? mb_fc_dsp_groups_clamp : mb_fc_dsp_groups));
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x = input + b * depth;
        if (widened) {
            fc_widen_row(x, depth, (int32_t *)scratch);
            x = (const int8_t *)scratch;
        }
        const int32_t chunk_bytes = widened ? 8 : 4;
        const fc_groups_job job = {x, x + chunk_bytes * (depth / 4 % 8),
                                   x + chunk_bytes * (depth / 4), bias, params->requant,
                                   output + b * params->output_depth, groups, amin4, amax4,
                                   weights};
        run(&job);
    }
    return 1;
}

/* GCC's pre-allocation scheduling hoists all loads of the unrolled loop and spills accumulators
 * on Cortex-M4; without it the loop stays in registers. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-schedule-insns")))
#endif
void mb_fully_connected_s8_dsp(const mb_fully_connected_s8_params *params, const int8_t *input,
                               const int8_t *weights, const int32_t *bias, int8_t *output,
                               void *scratch)
{
    const int32_t depth = params->input_depth;
    const int32_t out_depth = params->output_depth;
    const int32_t groups = out_depth / 4;
    const int32_t chunks = depth / 4;
    const int32_t tail = depth - chunks * 4;
    const int aligned = ((uintptr_t)weights & 7u) == 0 && (depth & 1) == 0;
    /* The fast path does every group; the rows left over remain. */
    const int32_t done = fc_groups(params, input, weights, bias, output, 0, scratch) ? groups : 0;
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x_row = input + b * depth;
        int8_t *y = output + b * out_depth;
        const int8_t *w = weights + done * 4 * depth;
        int32_t c = done * 4;
        for (int32_t g = done; g < groups; g++, c += 4) {
            int32_t acc0 = bias[c];
            int32_t acc1 = bias[c + 1];
            int32_t acc2 = bias[c + 2];
            int32_t acc3 = bias[c + 3];
            const int8_t *x = x_row;
            /* Two chunks per iteration (pointer compares, no counter). The weights are 8-byte
             * aligned throughout when the array is and the depth is even (every group then
             * spans a multiple of 8 bytes): LDRD then loads two words at once. */
            const int8_t *x_pairs_end = x_row + (chunks & ~(int32_t)1) * 4;
            if (aligned) {
                while (x != x_pairs_end) {
                    FC_DSP_CHUNK4(0, fc_load2_aligned)
                    FC_DSP_CHUNK4(1, fc_load2_aligned)
                    x += 8;
                    w += 32;
                }
            } else {
                while (x != x_pairs_end) {
                    FC_DSP_CHUNK4(0, fc_load2)
                    FC_DSP_CHUNK4(1, fc_load2)
                    x += 8;
                    w += 32;
                }
            }
            if (chunks & 1) {
                FC_DSP_CHUNK4(0, fc_load2)
                x += 4;
                w += 16;
            }
            for (int32_t t = 0; t < tail; t++) {
                const int32_t xt = x[t];
                acc0 += w[t] * xt;
                acc1 += w[tail + t] * xt;
                acc2 += w[2 * tail + t] * xt;
                acc3 += w[3 * tail + t] * xt;
            }
            w += 4 * tail;
            y[c] = fc_requantize(params, c, acc0);
            y[c + 1] = fc_requantize(params, c + 1, acc1);
            y[c + 2] = fc_requantize(params, c + 2, acc2);
            y[c + 3] = fc_requantize(params, c + 3, acc3);
        }
        for (; c < out_depth; c++) {
            int32_t acc = bias[c];
            const int8_t *x = x_row;
            for (int32_t k = 0; k < chunks; k++, x += 4, w += 4) {
                const uint32_t xv = mb_load32(x);
                const uint32_t wv = mb_load32(w);
                acc = __smlad(mb_even16(wv), mb_even16(xv), acc);
                acc = __smlad(mb_odd16(wv), mb_odd16(xv), acc);
            }
            for (int32_t t = 0; t < tail; t++) {
                acc += w[t] * x[t];
            }
            w += tail;
            y[c] = fc_requantize(params, c, acc);
        }
    }
}

/* dsp_wide: the dsp layout widened to int16 at compile time, each whole chunk's four weights stored
 * w0 w2 w1 w3 (arrange_dsp_wide in microbuild/compiler/ops/fully_connected.py), so a row's chunk is
 * the two words SMLAD pairs with the input's (x0, x2) and (x1, x3) directly: no SXTB16 on the
 * weights (13 instructions per 16 MACs instead of 20 in the assembly fast path), for twice the
 * weights' flash. The tail and the rows left over keep the dsp order of their values, as int16. */
/* Two words of int16 weights at p + offset values. In the groups' chunks always 8-byte aligned:
 * the array is (MB_WEIGHTS_ATTR, 16), and every chunk, group and tail spans a multiple of 8
 * bytes (4 rows x 2 bytes per value). One LDRD then (GCC splits a 64-bit memcpy into two LDR
 * when only the halves are used, so it is spelled out). */
#if defined(__thumb2__)
#define FC_WIDE_LDRD(p, offset, a, b)                                                             \
    __asm__("ldrd %0, %1, [%2, %3]" : "=r"(a), "=r"(b) : "r"(p), "I"(2 * (offset)))
#else
#define FC_WIDE_LDRD(p, offset, a, b) fc_wide_load2((p) + (offset), &(a), &(b))
#endif

/* Any alignment (the rows left over when the depth is not a multiple of 4). */
static inline void fc_wide_load2(const int16_t *p, uint32_t *a, uint32_t *b)
{
    memcpy(a, p, 4);
    memcpy(b, p + 2, 4);
}

#define FC_DSP_WIDE_CHUNK4(k)                                                                        \
    {                                                                                             \
        const uint32_t xv = mb_load32(x + 4 * (k));                                               \
        const int32_t xe = mb_even16(xv);                                                           \
        const int32_t xo = mb_odd16(xv);                                                            \
        uint32_t a, b;                                                                            \
        FC_WIDE_LDRD(w, 16 * (k), a, b);                                                          \
        acc0 = __smlad((int32_t)a, xe, acc0);                                                     \
        acc0 = __smlad((int32_t)b, xo, acc0);                                                     \
        FC_WIDE_LDRD(w, 16 * (k) + 4, a, b);                                                      \
        acc1 = __smlad((int32_t)a, xe, acc1);                                                     \
        acc1 = __smlad((int32_t)b, xo, acc1);                                                     \
        FC_WIDE_LDRD(w, 16 * (k) + 8, a, b);                                                      \
        acc2 = __smlad((int32_t)a, xe, acc2);                                                     \
        acc2 = __smlad((int32_t)b, xo, acc2);                                                     \
        FC_WIDE_LDRD(w, 16 * (k) + 12, a, b);                                                     \
        acc3 = __smlad((int32_t)a, xe, acc3);                                                     \
        acc3 = __smlad((int32_t)b, xo, acc3);                                                     \
    }

void mb_fully_connected_s8_dsp_wide(const mb_fully_connected_s8_params *params,
                                 const int8_t *input, const int8_t *weights_bytes,
                                 const int32_t *bias, int8_t *output, void *scratch)
{
    const int16_t *weights = (const int16_t *)(const void *)weights_bytes;
    const int32_t depth = params->input_depth;
    const int32_t out_depth = params->output_depth;
    const int32_t groups = out_depth / 4;
    const int32_t chunks = depth / 4;
    const int32_t tail = depth - chunks * 4;
    const int32_t done = fc_groups(params, input, weights, bias, output, 1, scratch) ? groups : 0;
    for (int32_t b = 0; b < params->batches; b++) {
        const int8_t *x_row = input + b * depth;
        int8_t *y = output + b * out_depth;
        const int16_t *w = weights + done * 4 * depth;
        int32_t c = done * 4;
        for (int32_t g = done; g < groups; g++, c += 4) {
            int32_t acc0 = bias[c];
            int32_t acc1 = bias[c + 1];
            int32_t acc2 = bias[c + 2];
            int32_t acc3 = bias[c + 3];
            const int8_t *x = x_row;
            const int8_t *x_pairs_end = x_row + (chunks & ~(int32_t)1) * 4;
            while (x != x_pairs_end) {
                FC_DSP_WIDE_CHUNK4(0)
                FC_DSP_WIDE_CHUNK4(1)
                x += 8;
                w += 32;
            }
            if (chunks & 1) {
                FC_DSP_WIDE_CHUNK4(0)
                x += 4;
                w += 16;
            }
            for (int32_t t = 0; t < tail; t++) {
                const int32_t xt = x[t];
                acc0 += w[t] * xt;
                acc1 += w[tail + t] * xt;
                acc2 += w[2 * tail + t] * xt;
                acc3 += w[3 * tail + t] * xt;
            }
            w += 4 * tail;
            y[c] = fc_requantize(params, c, acc0);
            y[c + 1] = fc_requantize(params, c + 1, acc1);
            y[c + 2] = fc_requantize(params, c + 2, acc2);
            y[c + 3] = fc_requantize(params, c + 3, acc3);
        }
        for (; c < out_depth; c++) {
            int32_t acc = bias[c];
            const int8_t *x = x_row;
            for (int32_t k = 0; k < chunks; k++, x += 4, w += 4) {
                const uint32_t xv = mb_load32(x);
                uint32_t a, bw;
                fc_wide_load2(w, &a, &bw);
                acc = __smlad((int32_t)a, mb_even16(xv), acc);
                acc = __smlad((int32_t)bw, mb_odd16(xv), acc);
            }
            for (int32_t t = 0; t < tail; t++) {
                acc += w[t] * x[t];
            }
            w += tail;
            y[c] = fc_requantize(params, c, acc);
        }
    }
}

#else
typedef int mb_fully_connected_dsp_unused;
#endif
