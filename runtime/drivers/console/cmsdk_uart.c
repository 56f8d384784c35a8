/* Console on an Arm CMSDK APB UART (MPS2 and MPS3 FPGA images, and QEMU's models of them).
 *
 * transport.options:
 *   uart_clock_hz  clock of the APB UART block (default: cpu.clock_hz, as on the MPS2/MPS3 images)
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "cmsdk_uart needs the UART's address: transport.base"
#endif
#ifndef MB_CONSOLE_BAUD
#error "cmsdk_uart needs transport.baud"
#endif
#ifndef MB_CONSOLE_OPT_UART_CLOCK_HZ
#define MB_CONSOLE_OPT_UART_CLOCK_HZ MB_CPU_CLOCK_HZ
#endif

#define UART_REG(offset) (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + (offset)))
#define UART_DATA    UART_REG(0x00u)
#define UART_STATE   UART_REG(0x04u)
#define UART_CTRL    UART_REG(0x08u)
#define UART_BAUDDIV UART_REG(0x10u)

#define STATE_TX_FULL (1u << 0)
#define STATE_RX_FULL (1u << 1)
#define CTRL_TX_EN    (1u << 0)
#define CTRL_RX_EN    (1u << 1)

/* The UART needs a divider of at least 16; QEMU refuses to send with a smaller one. */
#define UART_DIVIDER ((uint32_t)(MB_CONSOLE_OPT_UART_CLOCK_HZ) / (uint32_t)(MB_CONSOLE_BAUD))

void mb_console_init(void)
{
    UART_CTRL = 0u;
    UART_BAUDDIV = UART_DIVIDER < 16u ? 16u : UART_DIVIDER;
    /* Both directions: with TX disabled the second byte written would wait forever. */
    UART_CTRL = CTRL_TX_EN | CTRL_RX_EN;
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        while (UART_STATE & STATE_TX_FULL) {
        }
        UART_DATA = bytes[i];
    }
}

int mb_console_try_read(void)
{
    if ((UART_STATE & STATE_RX_FULL) == 0u) {
        return -1;
    }
    return (int)(UART_DATA & 0xFFu);
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
