/* Your application: a Zephyr application running the models microbuild compiled, with
 * microbuild's standalone (AOT) executor. `microbuild generate` wrote this file once and never
 * overwrites it: change it as you like.
 *
 * It runs every model linked into the firmware (the table generated in
 * modules/microbuild/generated/mb_aot_models.c) on its embedded input and prints the same console
 * lines as microbuild's bare-metal firmware (protocol in microbuild/aot.h), so `microbuild` reads
 * them the same way:
 *   - the lines go to the board's console UART (devicetree chosen node zephyr,console) through
 *     Zephyr's polling UART API, uart_poll_out();
 *   - ticks are hardware cycles from k_cycle_get_32(), at sys_clock_hw_cycles_per_sec() Hz.
 */
#include <stdint.h>
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/kernel.h>

#include "mb_board_config.h"
#include "microbuild/aot.h"
#include "microbuild/platform.h"

static const struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

/* microbuild/platform.h's console output, which mb_print() (runtime/support/print.c) uses. */
void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        uart_poll_out(console, bytes[i]);
    }
}

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

/* Runs one model MB_AOT_REPEATS times (fewer if a run fails), prints its lines and returns the
 * status of the last run. k_cycle_get_32() wraps; the difference of two readings is right for
 * any run shorter than 2^32 cycles (about 20 s at 216 MHz). */
static int run_model(const mb_aot_model *model)
{
    uint64_t cycles = 0;
    uint32_t runs = 0;
    int status = 0;
    while (runs < (uint32_t)(MB_AOT_REPEATS)) {
        copy_inputs(model); /* operators working in place may have overwritten them */
        const uint32_t start = k_cycle_get_32();
        status = model->run(model->workspace);
        cycles += (uint32_t)(k_cycle_get_32() - start);
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
    print_field_u64(cycles / runs);
    mb_print("\nmb-aot status ");
    mb_print(model->name);
    mb_print(" ");
    mb_print_i32(status);
    mb_print("\n");
    return status;
}

int main(void)
{
    if (!device_is_ready(console)) {
        return 0; /* no console to report on */
    }

    mb_print("mb-aot begin ");
    mb_print(MB_BOARD_NAME);
    print_field_u64((uint64_t)sys_clock_hw_cycles_per_sec());
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
    return 0;
}
