/* Your application: a Zephyr application serving microbuild's host-driven (RPC) executor on the
 * console UART. `microbuild generate` wrote this file once and never overwrites it: change it as
 * you like.
 *
 * The host (`microbuild.connect(board, "build/zephyr/zephyr.elf", description=
 * "modules/microbuild/generated/firmware.rpc.json")`, or `microbuild run`) uploads inputs, runs
 * the models or single operators, times them and reads the outputs (docs/rpc-protocol.md). What
 * the server needs from the board (microbuild/platform.h) is Zephyr's here:
 *   - the console is the UART of the devicetree chosen node zephyr,console, through Zephyr's
 *     polling UART API: uart_poll_out() to write, uart_poll_in() (yielding while nothing has
 *     arrived) to read;
 *   - the timer is k_cycle_get_32(), widened to 64 bits and converted to the MB_TIMER_HZ ticks
 *     the board YAML's timer has, which the host expects.
 */
#include <stdint.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/kernel.h>

#include "mb_board_config.h"
#include "microbuild/platform.h"
#include "microbuild/rpc.h"

static const struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

void mb_console_init(void)
{
    /* Zephyr's UART driver is brought up by the kernel, at the devicetree's baud rate. */
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        uart_poll_out(console, bytes[i]);
    }
}

int mb_console_try_read(void)
{
    unsigned char byte;
    return uart_poll_in(console, &byte) == 0 ? (int)byte : -1;
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
        k_yield(); /* let other threads run while the host is quiet */
    }
    return (uint8_t)byte;
}

void mb_timer_init(void)
{
}

/* k_cycle_get_32() wraps; counting the wraps (the server reads the timer far more often than
 * once per wrap, about 20 s at 216 MHz) gives 64-bit cycles, converted to MB_TIMER_HZ. */
uint64_t mb_timer_now(void)
{
    static uint32_t last;
    static uint64_t high;
    const uint32_t now = k_cycle_get_32();
    if (now < last) {
        high += (uint64_t)1 << 32;
    }
    last = now;
    const uint64_t cycles = high | now;
    const uint64_t hz = sys_clock_hw_cycles_per_sec();
    return (cycles / hz) * (uint64_t)(MB_TIMER_HZ) + (cycles % hz) * (uint64_t)(MB_TIMER_HZ) / hz;
}

int main(void)
{
    if (!device_is_ready(console)) {
        return 0; /* no console to serve on */
    }
    mb_rpc_server_run(); /* never returns */
    return 0;
}
