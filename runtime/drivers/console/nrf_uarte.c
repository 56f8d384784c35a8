/* Console on a Nordic nRF52/nRF53 UARTE (UART with EasyDMA). Register offsets from the nRF52840
 * Product Specification; not verified on hardware by microbuild's tests (QEMU models no nRF).
 *
 * EasyDMA can only read and write data RAM, so transmitted bytes (which may be in flash) go
 * through a small RAM buffer, and reception uses a one-byte RAM buffer restarted after each byte.
 *
 * transport.options:
 *   tx_pin, rx_pin  GPIO numbers (required): 0-31 for P0.00-P0.31, 32-47 for P1.00-P1.15
 *   baudrate_reg    raw BAUDRATE register value (default: computed from transport.baud)
 */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BASE
#error "nrf_uarte needs the UARTE's address: transport.base"
#endif
#ifndef MB_CONSOLE_BAUD
#error "nrf_uarte needs transport.baud"
#endif
#ifndef MB_CONSOLE_OPT_TX_PIN
#error "nrf_uarte needs the TX pin: transport.options.tx_pin"
#endif
#ifndef MB_CONSOLE_OPT_RX_PIN
#error "nrf_uarte needs the RX pin: transport.options.rx_pin"
#endif
#ifndef MB_CONSOLE_OPT_BAUDRATE_REG
/* BAUDRATE = baud * 2^32 / 16 MHz, rounded to a multiple of 0x1000 (115200 -> 0x01D7E000). The
 * Product Specification's UARTE table lists slightly different values for some rates (e.g.
 * 0x01D60000 for 115200); both are within 1 % of the nominal rate. */
#define MB_CONSOLE_OPT_BAUDRATE_REG \
    ((uint32_t)((((uint64_t)(MB_CONSOLE_BAUD) << 32) / 16000000u + 0x800u) & ~(uint64_t)0xFFFu))
#endif

#define UARTE_REG(offset) (*(volatile uint32_t *)((uintptr_t)(MB_CONSOLE_BASE) + (offset)))
#define UARTE_TASKS_STARTRX UARTE_REG(0x000u)
#define UARTE_TASKS_STARTTX UARTE_REG(0x008u)
#define UARTE_EVENTS_RXDRDY UARTE_REG(0x108u)
#define UARTE_EVENTS_ENDRX  UARTE_REG(0x110u)
#define UARTE_EVENTS_ENDTX  UARTE_REG(0x120u)
#define UARTE_EVENTS_ERROR  UARTE_REG(0x124u)
#define UARTE_SHORTS        UARTE_REG(0x200u)
#define UARTE_INTEN         UARTE_REG(0x300u)
#define UARTE_ERRORSRC      UARTE_REG(0x480u)
#define UARTE_ENABLE        UARTE_REG(0x500u)
#define UARTE_PSEL_RTS      UARTE_REG(0x508u)
#define UARTE_PSEL_TXD      UARTE_REG(0x50Cu)
#define UARTE_PSEL_CTS      UARTE_REG(0x510u)
#define UARTE_PSEL_RXD      UARTE_REG(0x514u)
#define UARTE_BAUDRATE      UARTE_REG(0x524u)
#define UARTE_RXD_PTR       UARTE_REG(0x534u)
#define UARTE_RXD_MAXCNT    UARTE_REG(0x538u)
#define UARTE_TXD_PTR       UARTE_REG(0x544u)
#define UARTE_TXD_MAXCNT    UARTE_REG(0x548u)
#define UARTE_CONFIG        UARTE_REG(0x56Cu)

#define UARTE_ENABLE_ON     8u
#define PSEL_DISCONNECTED   0xFFFFFFFFu
#define CONFIG_8N1_NO_FLOW  0u

/* GPIO ports (for the idle level of the TX line). Pin n is port n / 32, bit n % 32; PSEL takes
 * the same numbering (bit 5 = port). */
#define GPIO_PORT(pin)          (0x50000000u + ((uint32_t)(pin) / 32u) * 0x300u)
#define GPIO_REG(pin, offset)   (*(volatile uint32_t *)(uintptr_t)(GPIO_PORT(pin) + (offset)))
#define GPIO_OUTSET(pin)        GPIO_REG(pin, 0x508u)
#define GPIO_PIN_CNF(pin)       GPIO_REG(pin, 0x700u + 4u * ((uint32_t)(pin) % 32u))
#define PIN_CNF_OUTPUT          0x1u /* DIR = output, input buffer connected, no pull */
#define PIN_CNF_INPUT           0x0u /* DIR = input, input buffer connected, no pull */
#define GPIO_BIT(pin)           (1u << ((uint32_t)(pin) % 32u))

/* Bytes sent per DMA transfer; MAXCNT is 8 bits wide on the nRF52832, 16 on the nRF52840. */
#define TX_CHUNK 64u

static uint8_t tx_buffer[TX_CHUNK];
static volatile uint8_t rx_byte;

static void start_rx(void)
{
    UARTE_EVENTS_ENDRX = 0u;
    UARTE_EVENTS_RXDRDY = 0u;
    UARTE_RXD_PTR = (uint32_t)(uintptr_t)&rx_byte;
    UARTE_RXD_MAXCNT = 1u;
    UARTE_TASKS_STARTRX = 1u;
}

void mb_console_init(void)
{
    UARTE_ENABLE = 0u;
    UARTE_INTEN = 0u; /* polled */
    UARTE_SHORTS = 0u;

    /* TX idles high while the UARTE is not driving it; RX is a plain input. */
    GPIO_OUTSET(MB_CONSOLE_OPT_TX_PIN) = GPIO_BIT(MB_CONSOLE_OPT_TX_PIN);
    GPIO_PIN_CNF(MB_CONSOLE_OPT_TX_PIN) = PIN_CNF_OUTPUT;
    GPIO_PIN_CNF(MB_CONSOLE_OPT_RX_PIN) = PIN_CNF_INPUT;

    UARTE_PSEL_TXD = (uint32_t)(MB_CONSOLE_OPT_TX_PIN);
    UARTE_PSEL_RXD = (uint32_t)(MB_CONSOLE_OPT_RX_PIN);
    UARTE_PSEL_RTS = PSEL_DISCONNECTED;
    UARTE_PSEL_CTS = PSEL_DISCONNECTED;
    UARTE_BAUDRATE = MB_CONSOLE_OPT_BAUDRATE_REG;
    UARTE_CONFIG = CONFIG_8N1_NO_FLOW;
    UARTE_ENABLE = UARTE_ENABLE_ON;

    start_rx();
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    while (length > 0u) {
        const size_t chunk = length < TX_CHUNK ? length : TX_CHUNK;
        for (size_t i = 0; i < chunk; i++) {
            tx_buffer[i] = bytes[i];
        }
        /* The buffer writes must reach RAM before the DMA starts reading it. */
        __asm__ volatile ("dmb" ::: "memory");
        UARTE_EVENTS_ENDTX = 0u;
        UARTE_TXD_PTR = (uint32_t)(uintptr_t)tx_buffer;
        UARTE_TXD_MAXCNT = (uint32_t)chunk;
        UARTE_TASKS_STARTTX = 1u;
        while (UARTE_EVENTS_ENDTX == 0u) {
        }
        UARTE_EVENTS_ENDTX = 0u;
        bytes += chunk;
        length -= chunk;
    }
}

int mb_console_try_read(void)
{
    if (UARTE_EVENTS_ERROR != 0u) {
        /* Framing/overrun errors: acknowledge them so they do not pile up; the byte (if any) is
         * still delivered through ENDRX. */
        UARTE_ERRORSRC = UARTE_ERRORSRC; /* write 1 to clear */
        UARTE_EVENTS_ERROR = 0u;
    }
    /* ENDRX (not RXDRDY) says the byte is in RAM. Bytes arriving before the restart wait in the
     * UARTE's receive FIFO. */
    if (UARTE_EVENTS_ENDRX == 0u) {
        return -1;
    }
    const uint8_t byte = rx_byte;
    start_rx();
    return byte;
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
