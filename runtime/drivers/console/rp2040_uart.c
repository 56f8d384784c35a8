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

#include "pl011.h"

#define UART_DIVISOR PL011_DIVISOR(MB_CONSOLE_OPT_UART_CLOCK_HZ)

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
    pl011_write(data, length);
}

int mb_console_try_read(void)
{
    return pl011_try_read();
}

uint8_t mb_console_read(void)
{
    return pl011_read();
}
