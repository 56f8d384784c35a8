/* The self-test of the standalone (AOT) executor: runs each model linked into the firmware on its
 * embedded inputs, prints outputs, ticks and status on the console (protocol in microbuild/aot.h)
 * and returns 0 if every run returned 0, else 1. main in microbuild's own AOT firmware
 * (runtime/aot/main.c); called from a generated project's src/main.c built with MB_SELF_TEST=1. */
#include <string.h>

#include "mb_board_config.h"
#include "microbuild/aot.h"
#include "microbuild/platform.h"

#if MB_AOT_REPEATS < 1
#error "MB_AOT_REPEATS must be at least 1"
#endif

static void print_field_u64(uint64_t value)
{
    mb_print(" ");
    mb_print_u64(value);
}

static void copy_inputs(const mb_aot_model *model)
{
    for (uint32_t i = 0; i < model->input_count; i++) {
        const mb_aot_tensor *input = &model->inputs[i];
        memcpy(model->workspace + input->slot_offset, input->data, input->bytes);
    }
}

/* Runs one model MB_AOT_REPEATS times (fewer if a run fails) and prints its lines; returns the
 * status of the last run. */
static int run_model(const mb_aot_model *model)
{
    uint64_t ticks = 0;
    uint32_t runs = 0;
    int status = 0;
    while (runs < (uint32_t)(MB_AOT_REPEATS)) {
        /* Before every run: operators working in place may have overwritten the inputs. */
        copy_inputs(model);
        const uint64_t start = mb_timer_now();
        status = model->run(model->workspace);
        ticks += mb_timer_now() - start;
        runs++;
        if (status != 0) {
            break;
        }
    }

    for (uint32_t i = 0; i < model->output_count; i++) {
        const mb_aot_tensor *output = &model->outputs[i];
        mb_print("mb-aot output ");
        mb_print(model->name);
        print_field_u64(i);
        print_field_u64(output->bytes);
        mb_print(" ");
        mb_print_hex(model->workspace + output->slot_offset, output->bytes);
        mb_print("\n");
    }
    mb_print("mb-aot ticks ");
    mb_print(model->name);
    print_field_u64(ticks / runs);
    mb_print("\nmb-aot status ");
    mb_print(model->name);
    mb_print(" ");
    mb_print_i32(status);
    mb_print("\n");
    return status;
}

int mb_aot_self_test(void)
{
    mb_console_init();
    mb_timer_init();

    mb_print("mb-aot begin ");
    mb_print(MB_BOARD_NAME);
    print_field_u64((uint64_t)(MB_TIMER_HZ));
    print_field_u64(mb_aot_model_count);
    mb_print("\n");

    int exit_status = 0;
    for (uint32_t m = 0; m < mb_aot_model_count; m++) {
        if (run_model(&mb_aot_models[m]) != 0) {
            exit_status = 1;
        }
    }

    mb_print("mb-aot end ");
    mb_print_i32(exit_status);
    mb_print("\n");
    return exit_status;
}
