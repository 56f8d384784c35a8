/* The stand-in's Zephyr APIs on the Cortex-M7: enough to link main.c (the firmware is built,
 * sized and inspected, not run). */
#include <stdint.h>

#include "zephyr/device.h"
#include "zephyr/devicetree.h"
#include "zephyr/drivers/uart.h"
#include "zephyr/kernel.h"

int main(void);

const struct device mb_test_device_zephyr_console = {"uart0"};
static volatile uint32_t cycles;
static volatile unsigned char last_char;

bool device_is_ready(const struct device *dev)
{
    return dev == &mb_test_device_zephyr_console;
}

void uart_poll_out(const struct device *dev, unsigned char out_char)
{
    (void)dev;
    last_char = out_char;
}

int uart_poll_in(const struct device *dev, unsigned char *p_char)
{
    (void)dev;
    (void)p_char;
    return -1; /* nothing received: the stand-in is built, not run */
}

void k_yield(void)
{
}

uint32_t k_cycle_get_32(void)
{
    return cycles++;
}

uint32_t sys_clock_hw_cycles_per_sec(void)
{
    return 216000000u;
}

void mb_stand_in_reset(void)
{
    main();
    for (;;) {
    }
}
