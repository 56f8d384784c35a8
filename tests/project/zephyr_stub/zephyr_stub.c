/* The stand-in Zephyr APIs on the host: the console UART is stdout (written) and stdin (read;
 * its end ends the program, as microbuild's host firmware does), cycles are nanoseconds. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
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

int uart_poll_in(const struct device *dev, unsigned char *p_char)
{
    if (dev != &mb_test_device_zephyr_console) {
        return -1;
    }
    fflush(stdout); /* the host waits for the reply before it sends more */
    const int c = getchar();
    if (c == EOF) {
        exit(0);
    }
    *p_char = (unsigned char)c;
    return 0;
}

void k_yield(void)
{
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
