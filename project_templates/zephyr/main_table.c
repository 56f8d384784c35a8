/* Your application: a Zephyr application with microbuild's table executor. `microbuild generate`
 * wrote this file once and never overwrites it: change it as you like.
 *
 * The firmware links the kernels its models call, not the models: a model is a blob (`microbuild
 * pack`) in one of the board's model slots (modules/microbuild/generated/mb_table_slots.h,
 * reserved in app.overlay), written apart from the firmware (`microbuild update`). The module's
 * mb_table_slots_main (runtime/table/slots_main.c) checks every slot, runs the newest valid blob
 * on a fixed input pattern and prints the same console lines as microbuild's bare-metal table
 * firmware:
 *   mb-table slot <k> at 0x<address>: <ok|reason> (seq <n>)
 *   mb-table running slot <k> (seq <n>)
 *   mb-table output <k> <hex>
 * Your application replaces that run with its own inputs: see runtime/include/microbuild/table.h
 * (mb_table_check, mb_table_io, mb_table_run). The lines go to the board's console UART
 * (devicetree chosen node zephyr,console) through Zephyr's polling UART API, uart_poll_out().
 */
#include <stddef.h>
#include <stdint.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/kernel.h>

#include "microbuild/platform.h"

static const struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

int mb_table_slots_main(void);

/* microbuild/platform.h's console output, which mb_print() (runtime/support/print.c) uses. */
void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        uart_poll_out(console, bytes[i]);
    }
}

int main(void)
{
    if (!device_is_ready(console)) {
        return 1;
    }
    return mb_table_slots_main();
}
