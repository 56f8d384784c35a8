#ifndef MB_TEST_ZEPHYR_DRIVERS_UART_H
#define MB_TEST_ZEPHYR_DRIVERS_UART_H
#include "zephyr/device.h"
void uart_poll_out(const struct device *dev, unsigned char out_char);
int uart_poll_in(const struct device *dev, unsigned char *p_char);
#endif
