/* Console on an AVR's USART0 (ATmega328P and relatives), registers from avr-libc's <avr/io.h>
 * (the device comes from -mmcu). 8N1 at MB_CONSOLE_BAUD, clocked from MB_CPU_CLOCK_HZ.
 *
 * transport.options:
 *   u2x   true: double-speed mode (divider 8 instead of 16). At 16 MHz, 115200 baud is 2.1% off
 *         with U2X and 3.5% off without, which many receivers do not tolerate; the Arduino
 *         Uno's USB-serial chip runs the same 16 MHz divider, so its 2.1% matches.
 *
 * The baud-rate register is UBRR = clock / (divider * baud) - 1, rounded to nearest; a rate more
 * than 2.5% away from MB_CONSOLE_BAUD is a build error rather than garbled text. */
#include <avr/io.h>

#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_CONSOLE_BAUD
#error "avr_usart needs transport.baud"
#endif
#ifndef MB_CONSOLE_OPT_U2X
#define MB_CONSOLE_OPT_U2X 0
#endif

#if MB_CONSOLE_OPT_U2X
#define USART_DIVIDER 8
#else
#define USART_DIVIDER 16
#endif

/* Plain integer arithmetic (no casts) so that #if can check it too. */
#define USART_STEP ((MB_CONSOLE_BAUD) * USART_DIVIDER)
#define USART_UBRR (((MB_CPU_CLOCK_HZ) + USART_STEP / 2) / USART_STEP - 1)
#define USART_ACTUAL_BAUD ((MB_CPU_CLOCK_HZ) / (USART_DIVIDER * (USART_UBRR + 1)))

#if (MB_CPU_CLOCK_HZ) / USART_STEP < 1 || USART_UBRR > 4095
#error "avr_usart: transport.baud cannot be reached from cpu.clock_hz (UBRR out of range 0..4095)"
#endif
#if USART_ACTUAL_BAUD * 1000 > (MB_CONSOLE_BAUD) * 1025 || USART_ACTUAL_BAUD * 1000 < (MB_CONSOLE_BAUD) * 975
#error "avr_usart: transport.baud is more than 2.5% off at this clock; try transport.options.u2x: true"
#endif

void mb_console_init(void)
{
    /* No need to turn the USART off first (a UBRR write takes effect at once), and simavr would
     * then never set UDRE0 again. */
    UBRR0H = (uint8_t)((unsigned long)USART_UBRR >> 8);
    UBRR0L = (uint8_t)((unsigned long)USART_UBRR & 0xFFu);
    UCSR0A = MB_CONSOLE_OPT_U2X ? (uint8_t)_BV(U2X0) : 0u;
    UCSR0C = (uint8_t)(_BV(UCSZ01) | _BV(UCSZ00)); /* asynchronous, 8 data bits, no parity, 1 stop */
    UCSR0B = (uint8_t)(_BV(RXEN0) | _BV(TXEN0));
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    for (size_t i = 0; i < length; i++) {
        while ((UCSR0A & _BV(UDRE0)) == 0) {
        }
        UDR0 = bytes[i];
    }
}

int mb_console_try_read(void)
{
    if ((UCSR0A & _BV(RXC0)) == 0) {
        return -1;
    }
    return UDR0; /* reading UDR0 also clears an overrun (DOR0) */
}

uint8_t mb_console_read(void)
{
    int byte;
    while ((byte = mb_console_try_read()) < 0) {
    }
    return (uint8_t)byte;
}
