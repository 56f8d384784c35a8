/* Console on an Ambiq Apollo3 UART (PL011-like, with its own clock select in CR). The driver also
 * powers the UART and routes its pads.
 *
 * NOT VERIFIED on hardware (QEMU models no Apollo3). Register offsets and field positions are
 * from public Apollo3 (Blue) datasheet material as best known; the ones least certain are marked
 * "unverified" below.
 *
 * transport.options:
 *   tx_pad, rx_pad          pad numbers (required; SparkFun Edge UART0: 48 and 49)
 *   tx_fncsel, rx_fncsel    pad function selecting UART TX/RX (default 0: right for pads 48/49
 *                           with UART0, different for other pads)
 *   uart_clock_hz           24000000 (default), 12000000, 6000000 or 3000000: the UART's
 *                           clock, chosen in CR.CLKSEL
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "apollo3_uart needs the UART's address: transport.base"
#endif
#ifndef MB_CONSOLE_BAUD
#error "apollo3_uart needs transport.baud"
#endif
#ifndef MB_CONSOLE_OPT_TX_PAD
#error "apollo3_uart needs the TX pad: transport.options.tx_pad"
#endif
#ifndef MB_CONSOLE_OPT_RX_PAD
#error "apollo3_uart needs the RX pad: transport.options.rx_pad"
#endif
#ifndef MB_CONSOLE_OPT_TX_FNCSEL
#define MB_CONSOLE_OPT_TX_FNCSEL 0
#endif
#ifndef MB_CONSOLE_OPT_RX_FNCSEL
#define MB_CONSOLE_OPT_RX_FNCSEL 0
#endif
#ifndef MB_CONSOLE_OPT_UART_CLOCK_HZ
#define MB_CONSOLE_OPT_UART_CLOCK_HZ 24000000
#endif

#if MB_CONSOLE_OPT_UART_CLOCK_HZ == 24000000
#define CR_CLKSEL 1u
#elif MB_CONSOLE_OPT_UART_CLOCK_HZ == 12000000
#define CR_CLKSEL 2u
#elif MB_CONSOLE_OPT_UART_CLOCK_HZ == 6000000
#define CR_CLKSEL 3u
#elif MB_CONSOLE_OPT_UART_CLOCK_HZ == 3000000
#define CR_CLKSEL 4u
#else
#error "apollo3_uart: transport.options.uart_clock_hz must be 24000000, 12000000, 6000000 or 3000000"
#endif

/* UART registers: the PL011 layout, plus clock enable/select in CR. */
#include "pl011.h"

#define CR_CLKEN  (1u << 3)
#define CR_CLKSEL_SHIFT 4

/* Power control: one enable bit per peripheral (unverified: PWRUART0 = bit 7, PWRUART1 = bit 8). */
#define PWRCTRL_DEVPWREN (*(volatile uint32_t *)0x40021008u)
#define UART1_BASE 0x4001D000u
#define DEVPWREN_UART ((uintptr_t)(MB_CONSOLE_BASE) == UART1_BASE ? (1u << 8) : (1u << 7))

/* GPIO pad configuration, locked unless PADKEY holds the key. Per pad: one byte in PADREGx
 * (4 pads per word) and a nibble in CFGx (8 pads per word). */
#define GPIO_BASE 0x40010000u
#define GPIO_PADREG(pad) (*(volatile uint32_t *)(uintptr_t)(GPIO_BASE + 0x00u + ((uint32_t)(pad) / 4u) * 4u))
#define GPIO_CFG(pad)    (*(volatile uint32_t *)(uintptr_t)(GPIO_BASE + 0x40u + ((uint32_t)(pad) / 8u) * 4u))
#define GPIO_PADKEY      (*(volatile uint32_t *)(uintptr_t)(GPIO_BASE + 0x60u))
#define PADKEY_UNLOCK 0x73u
#define PADREG_SHIFT(pad) (((uint32_t)(pad) % 4u) * 8u)
#define CFG_SHIFT(pad)    (((uint32_t)(pad) % 8u) * 4u)
#define PADREG_INPEN      (1u << 1)
#define PADREG_FNCSEL(f)  (((uint32_t)(f) & 7u) << 3)

#define UART_DIVISOR PL011_DIVISOR(MB_CONSOLE_OPT_UART_CLOCK_HZ)

static void set_pad(uint32_t pad, uint32_t padreg)
{
    GPIO_PADREG(pad) = (GPIO_PADREG(pad) & ~(0xFFu << PADREG_SHIFT(pad))) | (padreg << PADREG_SHIFT(pad));
    /* GPIO in/out configuration unused for a peripheral function: all zero. */
    GPIO_CFG(pad) &= ~(0xFu << CFG_SHIFT(pad));
}

void mb_console_init(void)
{
    PWRCTRL_DEVPWREN |= DEVPWREN_UART;
    /* Give the power domain time to come up. The HAL polls a DEVPWRSTATUS bit instead, but a
     * wrong guess at that bit would hang here forever; a delay cannot. */
    for (volatile uint32_t i = 0; i < 10000u; i++) {
    }

    GPIO_PADKEY = PADKEY_UNLOCK;
    set_pad(MB_CONSOLE_OPT_TX_PAD, PADREG_FNCSEL(MB_CONSOLE_OPT_TX_FNCSEL));
    set_pad(MB_CONSOLE_OPT_RX_PAD, PADREG_FNCSEL(MB_CONSOLE_OPT_RX_FNCSEL) | PADREG_INPEN);
    GPIO_PADKEY = 0u;

    UART_CR = 0u;
    UART_IMSC = 0u; /* polled */
    UART_CR = CR_CLKEN | (CR_CLKSEL << CR_CLKSEL_SHIFT);
    UART_IBRD = UART_DIVISOR >> 6;
    UART_FBRD = UART_DIVISOR & 0x3Fu;
    UART_LCR_H = LCR_H_WLEN_8 | LCR_H_FEN; /* latches IBRD/FBRD; 8N1 with FIFOs */
    UART_RSR = 0u;
    UART_CR = CR_CLKEN | (CR_CLKSEL << CR_CLKSEL_SHIFT) | CR_UARTEN | CR_TXE | CR_RXE;
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
