/* Console on an ESP32-C3 UART (UART0 at 0x60000000 on the DevKitM-1, wired to its USB-to-UART
 * bridge). Register offsets from the ESP32-C3 Technical Reference Manual, UART chapter:
 *   UART_FIFO_REG    0x00  write: push a byte to the TX FIFO; read: pop one from the RX FIFO
 *   UART_STATUS_REG  0x1C  RXFIFO_CNT bits 9:0, TXFIFO_CNT bits 25:16 (bytes in each FIFO)
 *   UART_CLKDIV_REG  0x14  CLKDIV bits 11:0 (integer part), FRAG bits 23:20 (sixteenths)
 * The FIFOs are 128 bytes.
 *
 * The boot ROM and the second-stage boot loader leave UART0 set up (115200 8N1 from the 40 MHz
 * crystal), so by default init changes nothing. With transport.options.uart_clock_hz (the
 * UART's source clock) the driver sets the divider for transport.baud itself.
 *
 * Not verified on hardware here (no board attached): it compiles with -Wall -Wextra -Werror for
 * RV32 and follows the TRM's register map.
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "esp32_uart needs the UART's address: transport.base (UART0: 0x60000000)"
#endif

#define UART_REG(offset) (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + (offset)))
#define UART_FIFO   UART_REG(0x00u)
#define UART_CLKDIV UART_REG(0x14u)
#define UART_STATUS UART_REG(0x1Cu)

#define RXFIFO_COUNT(status) ((status) & 0x3FFu)
#define TXFIFO_COUNT(status) (((status) >> 16) & 0x3FFu)
#define FIFO_BYTES 128u

void mb_console_init(void)
{
#if defined(MB_CONSOLE_OPT_UART_CLOCK_HZ) && defined(MB_CONSOLE_BAUD)
    /* divider = clock / baud in 1/16ths: integer part in CLKDIV, fraction in FRAG. */
    const uint32_t sixteenths = (uint32_t)(((uint64_t)(MB_CONSOLE_OPT_UART_CLOCK_HZ) * 16u
                                            + (MB_CONSOLE_BAUD) / 2u) / (MB_CONSOLE_BAUD));
    UART_CLKDIV = ((sixteenths & 0xFu) << 20) | ((sixteenths >> 4) & 0xFFFu);
#endif
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        while (TXFIFO_COUNT(UART_STATUS) >= FIFO_BYTES - 1u) {
        }
        UART_FIFO = bytes[i];
    }
}

int mb_console_try_read(void)
{
    if (RXFIFO_COUNT(UART_STATUS) == 0u) {
        return -1;
    }
    return (int)(UART_FIFO & 0xFFu);
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
