/* Console on UART0 of the TI Stellaris LM3S6965: a board's own driver, named by file in
 * board_defs/lm3s6965evb.yaml (transport.driver), implementing the mb_console_* functions of
 * microbuild/platform.h like microbuild's built-in drivers do.
 *
 * The UART is an Arm PL011 (register offsets and bits from the LM3S6965 datasheet's UART
 * chapter); in front of it the chip gates each peripheral's clock (RCGC1/RCGC2 in the system
 * control block) and muxes its pins (GPIO port A: PA0 = U0Rx, PA1 = U0Tx), which a real chip
 * needs before the first byte and QEMU accepts.
 *
 * transport.options:
 *   uart_clock_hz  clock of the UART block (default: cpu.clock_hz, the system clock)
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "this console driver needs the UART's address: transport.base"
#endif
#ifndef MB_CONSOLE_OPT_UART_CLOCK_HZ
#define MB_CONSOLE_OPT_UART_CLOCK_HZ MB_CPU_CLOCK_HZ
#endif

#define REG(address) (*(volatile uint32_t *)(uintptr_t)(address))

/* System control: run-mode clock gating. */
#define SYSCTL_RCGC1 REG(0x400FE104u)
#define SYSCTL_RCGC2 REG(0x400FE108u)
#define RCGC1_UART0 (1u << 0)
#define RCGC2_GPIOA (1u << 0)

/* GPIO port A (APB aperture): alternate function select and digital enable. */
#define GPIOA_AFSEL REG(0x40004420u)
#define GPIOA_DEN   REG(0x4000451Cu)
#define PA0_PA1     0x3u

/* The PL011. */
#define UART_DR   REG((MB_CONSOLE_BASE) + 0x000u)
#define UART_FR   REG((MB_CONSOLE_BASE) + 0x018u)
#define UART_IBRD REG((MB_CONSOLE_BASE) + 0x024u)
#define UART_FBRD REG((MB_CONSOLE_BASE) + 0x028u)
#define UART_LCRH REG((MB_CONSOLE_BASE) + 0x02Cu)
#define UART_CTL  REG((MB_CONSOLE_BASE) + 0x030u)

#define FR_RXFE (1u << 4) /* receive FIFO empty */
#define FR_TXFF (1u << 5) /* transmit FIFO full */
#define LCRH_FEN    (1u << 4)
#define LCRH_WLEN_8 (3u << 5)
#define CTL_UARTEN  (1u << 0)
#define CTL_TXE     (1u << 8)
#define CTL_RXE     (1u << 9)

/* Baud divisor clock / (16 * baud) as 16.6 fixed point: 64 * clock / (16 * baud) = 4 * clock
 * / baud, rounded to nearest. */
#define DIVISOR ((uint32_t)((8u * (uint64_t)(MB_CONSOLE_OPT_UART_CLOCK_HZ) \
                             / (uint32_t)(MB_CONSOLE_BAUD) + 1u) / 2u))

void mb_console_init(void)
{
    SYSCTL_RCGC1 |= RCGC1_UART0;
    SYSCTL_RCGC2 |= RCGC2_GPIOA;
    /* A few cycles must pass after gating a clock on before its registers answer. */
    (void)SYSCTL_RCGC2;
    (void)SYSCTL_RCGC2;
    GPIOA_AFSEL |= PA0_PA1;
    GPIOA_DEN |= PA0_PA1;

    UART_CTL = 0u; /* the divisor and line control change only while the UART is off */
    UART_IBRD = DIVISOR >> 6;
    UART_FBRD = DIVISOR & 0x3Fu;
    UART_LCRH = LCRH_WLEN_8 | LCRH_FEN; /* 8N1, FIFOs on; writing LCRH latches the divisor */
    UART_CTL = CTL_UARTEN | CTL_TXE | CTL_RXE;
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
    return (int)(UART_DR & 0xFFu); /* bits 11:8 are the byte's error flags */
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
