/* Console on an NS16550-compatible UART (QEMU RISC-V virt, many SoCs).
 *
 * transport.options:
 *   uart_clock_hz  the UART's input clock (default 3686400: QEMU virt's 16550)
 *   reg_shift      registers are 1 << reg_shift bytes apart (default 0)
 *   reg_width      access width in bytes, 1 or 4 (default 1)
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "ns16550 needs the UART's address: transport.base"
#endif
#ifndef MB_CONSOLE_BAUD
#error "ns16550 needs transport.baud"
#endif
#ifndef MB_CONSOLE_OPT_UART_CLOCK_HZ
#define MB_CONSOLE_OPT_UART_CLOCK_HZ 3686400u
#endif
#ifndef MB_CONSOLE_OPT_REG_SHIFT
#define MB_CONSOLE_OPT_REG_SHIFT 0
#endif
#ifndef MB_CONSOLE_OPT_REG_WIDTH
#define MB_CONSOLE_OPT_REG_WIDTH 1
#endif

#if MB_CONSOLE_OPT_REG_WIDTH == 1
typedef uint8_t uart_reg;
#elif MB_CONSOLE_OPT_REG_WIDTH == 4
typedef uint32_t uart_reg;
#else
#error "ns16550: transport.options.reg_width must be 1 or 4"
#endif

#define UART_REG(index) \
    (*(volatile uart_reg *)((uintptr_t)(MB_CONSOLE_BASE) + ((uintptr_t)(index) << (MB_CONSOLE_OPT_REG_SHIFT))))
#define UART_RBR UART_REG(0) /* read */
#define UART_THR UART_REG(0) /* write */
#define UART_DLL UART_REG(0) /* while LCR.DLAB */
#define UART_IER UART_REG(1)
#define UART_DLM UART_REG(1) /* while LCR.DLAB */
#define UART_FCR UART_REG(2) /* write */
#define UART_LCR UART_REG(3)
#define UART_MCR UART_REG(4)
#define UART_LSR UART_REG(5)

#define LCR_8N1  0x03u
#define LCR_DLAB 0x80u
#define FCR_ENABLE_AND_RESET 0x07u /* FIFO enable, clear RX and TX FIFOs */
#define MCR_DTR_RTS 0x03u
#define LSR_DATA_READY (1u << 0)
#define LSR_THR_EMPTY  (1u << 5)

#define UART_DIVISOR \
    (((uint32_t)(MB_CONSOLE_OPT_UART_CLOCK_HZ) + 8u * (uint32_t)(MB_CONSOLE_BAUD)) \
     / (16u * (uint32_t)(MB_CONSOLE_BAUD)))

void mb_console_init(void)
{
    UART_IER = 0u; /* polled */
    UART_LCR = LCR_DLAB;
    UART_DLL = (uart_reg)(UART_DIVISOR & 0xFFu);
    UART_DLM = (uart_reg)((UART_DIVISOR >> 8) & 0xFFu);
    UART_LCR = LCR_8N1;
    /* The FIFO lets a write of many bytes go on without waiting for each (much faster on QEMU). */
    UART_FCR = FCR_ENABLE_AND_RESET;
    UART_MCR = MCR_DTR_RTS;
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        while ((UART_LSR & LSR_THR_EMPTY) == 0u) {
        }
        UART_THR = bytes[i];
    }
}

int mb_console_try_read(void)
{
    if ((UART_LSR & LSR_DATA_READY) == 0u) {
        return -1;
    }
    return (int)(UART_RBR & 0xFFu);
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
