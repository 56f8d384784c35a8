/* The stand-in Zephyr APIs on the host: the console UART is stdout, cycles are nanoseconds. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "zephyr/device.h"
#include "zephyr/devicetree.h"
#include "zephyr/drivers/uart.h"
#include "zephyr/kernel.h"

const struct device mb_test_device_zephyr_console = {"uart0"};

bool device_is_ready(const struct device *dev)
{
    return dev == &mb_test_device_zephyr_console;
}

void uart_poll_out(const struct device *dev, unsigned char out_char)
{
    if (dev == &mb_test_device_zephyr_console) {
        putchar(out_char);
    }
}

uint32_t k_cycle_get_32(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint32_t)((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
}

uint32_t sys_clock_hw_cycles_per_sec(void)
{
    return 1000000000u;
}
