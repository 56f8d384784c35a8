/* Console on a SiFive UART (FE310 / HiFive1, QEMU sifive_e and sifive_u).
 *
 * transport.options:
 *   uart_clock_hz  the UART's bus clock (tlclk; default: cpu.clock_hz)
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "sifive_uart needs the UART's address: transport.base"
#endif
#ifndef MB_CONSOLE_BAUD
#error "sifive_uart needs transport.baud"
#endif
#ifndef MB_CONSOLE_OPT_UART_CLOCK_HZ
#define MB_CONSOLE_OPT_UART_CLOCK_HZ MB_CPU_CLOCK_HZ
#endif

#define UART_REG(offset) (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + (offset)))
#define UART_TXDATA UART_REG(0x00u)
#define UART_RXDATA UART_REG(0x04u)
#define UART_TXCTRL UART_REG(0x08u)
#define UART_RXCTRL UART_REG(0x0Cu)
#define UART_IE     UART_REG(0x10u)
#define UART_DIV    UART_REG(0x18u)

#define TXDATA_FULL  (1u << 31)
#define RXDATA_EMPTY (1u << 31)
#define TXCTRL_TXEN  (1u << 0)
#define RXCTRL_RXEN  (1u << 0)

/* baud = clock / (div + 1), rounded to nearest. */
#define UART_DIVIDER \
    (((uint32_t)(MB_CONSOLE_OPT_UART_CLOCK_HZ) + (uint32_t)(MB_CONSOLE_BAUD) / 2u) \
     / (uint32_t)(MB_CONSOLE_BAUD) - 1u)

void mb_console_init(void)
{
    UART_IE = 0u; /* polled */
    UART_DIV = UART_DIVIDER;
    UART_TXCTRL = TXCTRL_TXEN; /* one stop bit */
    UART_RXCTRL = RXCTRL_RXEN;
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        while (UART_TXDATA & TXDATA_FULL) {
        }
        UART_TXDATA = bytes[i];
    }
}

int mb_console_try_read(void)
{
    /* Reading rxdata pops the FIFO: read once, then look at the empty flag. */
    const uint32_t rx = UART_RXDATA;
    if (rx & RXDATA_EMPTY) {
        return -1;
    }
    return (int)(rx & 0xFFu);
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
