/* The Arm PrimeCell PL011 UART as the RP2040 and the Apollo3 implement it: register map, baud
 * divisor and the polled byte I/O both drivers share. Included by a console driver after
 * mb_board_config.h (it uses MB_CONSOLE_BASE and MB_CONSOLE_BAUD); each driver keeps its own
 * mb_console_init, since bringing the block up differs per chip. */
#ifndef MB_DRIVERS_PL011_H
#define MB_DRIVERS_PL011_H

#include <stddef.h>
#include <stdint.h>

#define UART_REG(offset) (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + (offset)))
#define UART_DR    UART_REG(0x000u)
#define UART_RSR   UART_REG(0x004u) /* write: clear receive errors */
#define UART_FR    UART_REG(0x018u)
#define UART_IBRD  UART_REG(0x024u)
#define UART_FBRD  UART_REG(0x028u)
#define UART_LCR_H UART_REG(0x02Cu)
#define UART_CR    UART_REG(0x030u)
#define UART_IMSC  UART_REG(0x038u) /* Apollo3 calls it IER */

#define FR_RXFE (1u << 4)
#define FR_TXFF (1u << 5)
#define LCR_H_FEN    (1u << 4)
#define LCR_H_WLEN_8 (3u << 5)
#define CR_UARTEN (1u << 0)
#define CR_TXE    (1u << 8)
#define CR_RXE    (1u << 9)

/* Divisor = clock / (16 * baud) in 16.6 fixed point = 4 * clock / baud, rounded to nearest. */
#define PL011_DIVISOR(clock_hz) \
    ((uint32_t)((8u * (uint64_t)(clock_hz) / (uint32_t)(MB_CONSOLE_BAUD) + 1u) / 2u))

static inline void pl011_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        while (UART_FR & FR_TXFF) {
        }
        UART_DR = bytes[i];
    }
}

static inline int pl011_try_read(void)
{
    if (UART_FR & FR_RXFE) {
        return -1;
    }
    return (int)(UART_DR & 0xFFu); /* bits 11:8 are error flags */
}

static inline uint8_t pl011_read(void)
{
    int byte;
    while ((byte = pl011_try_read()) < 0) {
    }
    return (uint8_t)byte;
}

#endif /* MB_DRIVERS_PL011_H */
