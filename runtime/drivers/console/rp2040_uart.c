/* Console on the RP2040's UART0/UART1, an Arm PrimeCell PL011. The board's init snippet releases
 * the UART from reset, starts clk_peri and routes the pins; this driver only programs the PL011.
 *
 * transport.options:
 *   uart_clock_hz  clk_peri, the UART's reference clock (required: it sets the baud divisor)
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "rp2040_uart needs the UART's address: transport.base"
#endif
#ifndef MB_CONSOLE_BAUD
#error "rp2040_uart needs transport.baud"
#endif
#ifndef MB_CONSOLE_OPT_UART_CLOCK_HZ
#error "rp2040_uart needs clk_peri's frequency: transport.options.uart_clock_hz"
#endif

#define UART_REG(offset) (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + (offset)))
#define UART_DR    UART_REG(0x000u)
#define UART_RSR   UART_REG(0x004u) /* write: clear receive errors */
#define UART_FR    UART_REG(0x018u)
#define UART_IBRD  UART_REG(0x024u)
#define UART_FBRD  UART_REG(0x028u)
#define UART_LCR_H UART_REG(0x02Cu)
#define UART_CR    UART_REG(0x030u)
#define UART_IMSC  UART_REG(0x038u)

#define FR_RXFE (1u << 4)
#define FR_TXFF (1u << 5)
#define LCR_H_FEN    (1u << 4)
#define LCR_H_WLEN_8 (3u << 5)
#define CR_UARTEN (1u << 0)
#define CR_TXE    (1u << 8)
#define CR_RXE    (1u << 9)

/* Divisor = clock / (16 * baud) in 16.6 fixed point = 4 * clock / baud, rounded to nearest. */
#define UART_DIVISOR \
    ((uint32_t)((8u * (uint64_t)(MB_CONSOLE_OPT_UART_CLOCK_HZ) / (uint32_t)(MB_CONSOLE_BAUD) + 1u) / 2u))

void mb_console_init(void)
{
    UART_CR = 0u;
    UART_IMSC = 0u; /* polled */
    UART_IBRD = UART_DIVISOR >> 6;
    UART_FBRD = UART_DIVISOR & 0x3Fu;
    /* Writing LCR_H latches IBRD/FBRD, so it comes after them. 8N1 with FIFOs. */
    UART_LCR_H = LCR_H_WLEN_8 | LCR_H_FEN;
    UART_RSR = 0u;
    UART_CR = CR_UARTEN | CR_TXE | CR_RXE;
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        while (UART_FR & FR_TXFF) {
        }
        UART_DR = bytes[i];
    }
}

int mb_console_try_read(void)
{
    if (UART_FR & FR_RXFE) {
        return -1;
    }
    return (int)(UART_DR & 0xFFu); /* bits 11:8 are error flags */
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
