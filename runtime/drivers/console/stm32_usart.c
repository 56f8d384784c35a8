/* Console on an STM32 USART/UART. The board's init snippet enables the peripheral's clock and
 * routes its pins; this driver only programs the USART.
 *
 * STM32 families have two register layouts:
 *   v1 (F1, F2, F4, L1): SR +0x00, DR +0x04, BRR +0x08, CR1 +0x0C (UE is bit 13)
 *   v2 (F0, F3, F7, G0, G4, H7, L0, L4, ...): CR1 +0x00 (UE is bit 0), BRR +0x0C, ISR +0x1C,
 *      ICR +0x20, RDR +0x24, TDR +0x28
 *
 * transport.options:
 *   pclk_hz    clock of the APB bus the USART sits on (required: it sets the baud rate divider)
 *   usart_v2   1 for the v2 layout, 0 (default) for v1
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "stm32_usart needs the USART's address: transport.base"
#endif
#ifndef MB_CONSOLE_BAUD
#error "stm32_usart needs transport.baud"
#endif
#ifndef MB_CONSOLE_OPT_PCLK_HZ
#error "stm32_usart needs the USART's bus clock: transport.options.pclk_hz"
#endif
#ifndef MB_CONSOLE_OPT_USART_V2
#define MB_CONSOLE_OPT_USART_V2 0
#endif

#define USART_REG(offset) (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + (offset)))

#if MB_CONSOLE_OPT_USART_V2
#define USART_CR1    USART_REG(0x00u)
#define USART_BRR    USART_REG(0x0Cu)
#define USART_STATUS USART_REG(0x1Cu) /* ISR */
#define USART_ICR    USART_REG(0x20u)
#define USART_RX     USART_REG(0x24u) /* RDR */
#define USART_TX     USART_REG(0x28u) /* TDR */
#define CR1_UE (1u << 0)
#else
#define USART_STATUS USART_REG(0x00u) /* SR */
#define USART_RX     USART_REG(0x04u) /* DR */
#define USART_TX     USART_REG(0x04u) /* DR */
#define USART_BRR    USART_REG(0x08u)
#define USART_CR1    USART_REG(0x0Cu)
#define CR1_UE (1u << 13)
#endif

#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
#define STATUS_ORE  (1u << 3)
#define STATUS_RXNE (1u << 5)
#define STATUS_TXE  (1u << 7)

/* 16x oversampling: the divider is pclk / baud, rounded to nearest. */
#define USART_DIVIDER \
    (((uint32_t)(MB_CONSOLE_OPT_PCLK_HZ) + (uint32_t)(MB_CONSOLE_BAUD) / 2u) / (uint32_t)(MB_CONSOLE_BAUD))

void mb_console_init(void)
{
    USART_CR1 = 0u; /* BRR may only be changed while the USART is disabled (v2) */
    USART_BRR = USART_DIVIDER;
    /* 8N1 is the reset state of CR1/CR2. */
    USART_CR1 = CR1_UE | CR1_TE | CR1_RE;
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        while ((USART_STATUS & STATUS_TXE) == 0u) {
        }
        USART_TX = bytes[i];
    }
}

int mb_console_try_read(void)
{
    const uint32_t status = USART_STATUS;
#if MB_CONSOLE_OPT_USART_V2
    /* v2 keeps an overrun flagged until it is cleared through ICR (v1 clears it on the DR read). */
    if (status & STATUS_ORE) {
        USART_ICR = STATUS_ORE;
    }
#endif
    if ((status & STATUS_RXNE) == 0u) {
        return -1;
    }
    return (int)(USART_RX & 0xFFu);
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
