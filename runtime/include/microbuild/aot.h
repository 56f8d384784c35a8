/* The standalone (AOT) executor: a firmware whose main runs each compiled model once on an input
 * embedded at build time, prints the outputs and the timer ticks on the console, and exits.
 *
 * microbuild generates one table (mb_aot_models.c) describing the models linked into the
 * firmware; runtime/aot/main.c is the same for every board and model.
 *
 * Console protocol (one line each, '\n'-terminated, read by microbuild/device/aot_output.py):
 *   mb-aot begin <board> <timer_hz> <model count>
 *   mb-aot output <model> <output index> <bytes> <hex bytes>
 *   mb-aot ticks <model> <ticks per inference>
 *   mb-aot status <model> <return value of <prefix>_run>
 *   mb-aot end <exit status>
 */
#ifndef MICROBUILD_AOT_H
#define MICROBUILD_AOT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const uint8_t *data;  /* inputs: the embedded input bytes; outputs: unused (NULL) */
    uint32_t bytes;
    uint32_t slot_offset; /* where the model's plan keeps this tensor in its workspace */
} mb_aot_tensor;

typedef struct {
    const char *name;               /* the model's C prefix */
    int (*run)(uint8_t *workspace); /* calls <prefix>_run with the slot pointers (zero-copy) */
    uint8_t *workspace;             /* <PREFIX>_WORKSPACE_SIZE bytes in section .mb_workspace */
    uint32_t input_count;
    uint32_t output_count;
    const mb_aot_tensor *inputs;
    const mb_aot_tensor *outputs;
} mb_aot_model;

extern const mb_aot_model mb_aot_models[];
extern const uint32_t mb_aot_model_count;

/* The self-test (runtime/aot/self_test.c): runs each model in mb_aot_models on its embedded
 * inputs, prints the lines above and returns 0 if every run returned 0, else 1. It is main in
 * microbuild's own AOT firmware (runtime/aot/main.c); a generated project's src/main.c calls it
 * when built with MB_SELF_TEST=1. */
int mb_aot_self_test(void);

/* Inferences timed per model; ticks printed are per inference (total / MB_AOT_REPEATS). */
#ifndef MB_AOT_REPEATS
#define MB_AOT_REPEATS 1
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICROBUILD_AOT_H */
