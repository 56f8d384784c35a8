/* UNIDIRECTIONAL_SEQUENCE_LSTM, bit-exact with TFLM's integer kernel (lstm_eval.h, EvalLstm):
 * int8 activations with int8 weights and int32 biases, or int16 activations (16x8) with int8
 * weights and int64 biases; gates and the cell state are int16.
 *
 * Per time step and batch row, each gate is the sum of two fully connected layers (input x its
 * weights + bias, hidden state x the recurrent weights), each rescaled to Q3.12 and clamped to
 * int16, added with int16 saturation, then squashed: sigmoid for the forget, input and output
 * gates, tanh for the cell gate, both TFLM's int16 table interpolation (Q0.15 out).
 * The cell state becomes forget x cell + input x cell gate (two int16 multiplications, a
 * saturating add), clipped to +-cell_clip when the model sets one; the hidden state is
 * tanh(cell) x output gate, requantized to the hidden state's scale and zero point, and copied to
 * the output at that time step. Hidden and cell states are the model's variable tensors: they
 * carry over from one invocation to the next.
 *
 * The compiler folds the input and hidden-state zero points into the int8 biases
 * (bias - zero_point x row sum; the recurrent layer's bias is that term alone), so the kernel
 * sums weights x raw values. */
#ifndef MICROBUILD_KERNELS_LSTM_H
#define MICROBUILD_KERNELS_LSTM_H

#include <stdint.h>

/* Gate order in the arrays below, as TFLM computes them. */
enum { MB_LSTM_FORGET = 0, MB_LSTM_INPUT = 1, MB_LSTM_CELL = 2, MB_LSTM_OUTPUT = 3 };

typedef struct {
    int32_t batches;
    int32_t time_steps;
    int32_t input_size;
    int32_t units;
    int32_t time_major; /* 1: input/output are [time][batch][...], else [batch][time][...] */
    int32_t input_multiplier[4]; /* input x weights -> Q3.12, per gate */
    int32_t input_shift[4];
    int32_t recurrent_multiplier[4]; /* hidden x recurrent weights -> Q3.12, per gate */
    int32_t recurrent_shift[4];
    int32_t forget_multiplier;   /* forget gate (Q0.15) x cell -> cell */
    int32_t forget_shift;
    int32_t update_multiplier;   /* input gate x cell gate (Q0.15 x Q0.15) -> cell */
    int32_t update_shift;
    int32_t hidden_multiplier;   /* tanh(cell) x output gate (Q0.15 x Q0.15) -> hidden */
    int32_t hidden_shift;
    int32_t hidden_zero_point;
    int32_t cell_clip;           /* 0: no clipping */
    int32_t tanh_multiplier;     /* cell state -> tanh's fixed point (see sigmoid16.h) */
    int32_t tanh_shift;
    /* 1 when every int8 gate sum, shifted left by its layer's left shift + 1, still fits in
     * int32 (the compiler's bound on the sums): the DSP builds then rescale with SMMULR
     * (dsp_words.h: mb_rescale_small). */
    int32_t small_sums;
} mb_lstm_params;

/* weights: the 8 weight matrices, gates in MB_LSTM_* order: the input layers' ([units][input_size])
 * then the recurrent layers' ([units][units]). bias: 8 x units values in the same order.
 * scratch: 3 x units int16 values. */
void mb_lstm_s8(const mb_lstm_params *params, const int8_t *input,
                const int8_t *const weights[8], const int32_t *bias, int8_t *hidden,
                int16_t *cell, int8_t *output, void *scratch);

void mb_lstm_s16(const mb_lstm_params *params, const int16_t *input,
                 const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                 int16_t *cell, int16_t *output, void *scratch);

/* The kernel variants (lstm_dsp.c, lstm_mve.c): the same arithmetic, so the same bytes out, with
 * the gates' row products on the Arm DSP (SMLAD / SMLALD) or Helium (VMLADAVA / VMLALDAVA) dot
 * products. Same arguments as the reference. */
void mb_lstm_s8_dsp(const mb_lstm_params *params, const int8_t *input,
                    const int8_t *const weights[8], const int32_t *bias, int8_t *hidden,
                    int16_t *cell, int8_t *output, void *scratch);
void mb_lstm_s16_dsp(const mb_lstm_params *params, const int16_t *input,
                     const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                     int16_t *cell, int16_t *output, void *scratch);
void mb_lstm_s8_mve(const mb_lstm_params *params, const int8_t *input,
                    const int8_t *const weights[8], const int32_t *bias, int8_t *hidden,
                    int16_t *cell, int8_t *output, void *scratch);
void mb_lstm_s16_mve(const mb_lstm_params *params, const int16_t *input,
                     const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                     int16_t *cell, int16_t *output, void *scratch);
/* "dsp_wide": the dsp variant on weights widened to int16 at compile time (weights[] point at
 * int16 arrays). */
void mb_lstm_s8_dsp_wide(const mb_lstm_params *params, const int8_t *input,
                         const int8_t *const weights[8], const int32_t *bias, int8_t *hidden,
                         int16_t *cell, int8_t *output, void *scratch);

/* What a variant plugs into the shared body (lstm.c).
 * prepare (optional, 0 for none): once per time step, turns the input row and the hidden state
 * (cols values each) into the form dot reads, in `buffer` (at most mb_lstm_prepared_bytes(cols),
 * 8-byte aligned, in the scratch), and returns what dot is given (the buffer, or the vector).
 * dot: acc[r] = bias[r] + row first + r of matrix m (one of the 8 weight matrices, as the variant
 * has them arranged) . the prepared vector, for r < n <= MB_LSTM_BLOCK; first is a multiple of 4. Sums are
 * exact (the compiler bounds them), so any order gives the reference's result. */
#define MB_LSTM_BLOCK 32
typedef const void *mb_lstm_prepare(const void *vector, int32_t cols, void *buffer);
typedef void mb_lstm_dot_s8(const void *m, int32_t first, int32_t cols, const void *vector,
                            int32_t n, const int32_t *bias, int32_t *acc);
typedef void mb_lstm_dot_s16(const void *m, int32_t first, int32_t cols, const void *vector,
                             int32_t n, const int64_t *bias, int64_t *acc);

/* A prepared vector of cols values: at most cols int16 values, rounded up to 8 bytes. */
static inline int32_t mb_lstm_prepared_bytes(int32_t cols)
{
    return (2 * cols + 7) & ~7;
}

/* The shared body: gates, cell update and hidden state around the given row products. Scratch:
 * 3 x units int16 gates, then with a prepare step 8 bytes of alignment and the two prepared
 * vectors. */
void mb_lstm_s8_with(const mb_lstm_params *params, const int8_t *input,
                     const int8_t *const weights[8], const int32_t *bias, int8_t *hidden,
                     int16_t *cell, int8_t *output, void *scratch, mb_lstm_prepare *prepare,
                     mb_lstm_dot_s8 *dot);
void mb_lstm_s16_with(const mb_lstm_params *params, const int16_t *input,
                      const int8_t *const weights[8], const int64_t *bias, int16_t *hidden,
                      int16_t *cell, int16_t *output, void *scratch, mb_lstm_prepare *prepare,
                      mb_lstm_dot_s16 *dot);

/* The DSP row products of lstm_dsp.c, which svdf_fast.c shares.
 * mb_dsp_widen_s8: an int8 vector of cols values widened for SMLAD: every whole 4-byte chunk as
 * the words SXTB16 makes of it, (x0, x2) and (x1, x3); then the last cols % 4 values as int16
 * (2 x cols bytes in buffer, word-aligned). Returns buffer.
 * mb_lstm_dsp_chunks: acc[0..3] += the whole chunks of a group of four int8 rows arranged as
 * arrange_rows(4, 4) stores them (w word-aligned) . the widened vector from x to x_end (two
 * words a chunk); returns where the group's tail (cols % 4 bytes of each row) starts.
 * mb_lstm_dsp_wide_chunks: the same on arrange_dsp_wide's int16 weights. */
const void *mb_dsp_widen_s8(const void *vector, int32_t cols, void *buffer);
const void *mb_lstm_dsp_chunks(const void *w, const int32_t *x, const int32_t *x_end,
                               int32_t *acc);
const void *mb_lstm_dsp_wide_chunks(const void *w, const int32_t *x, const int32_t *x_end,
                                    int32_t *acc);
/* mb_lstm_dsp_wide_groups: groups >= 1 groups of four widened rows, each acc[0..3] = bias[0..3]
 * + its whole chunks . the widened vector of x_bytes (> 0) bytes; returns where the next group
 * starts. */
const void *mb_lstm_dsp_wide_groups(const void *w, const int32_t *x, int32_t x_bytes,
                                    int32_t groups, const int32_t *bias, int32_t *acc);

#endif
