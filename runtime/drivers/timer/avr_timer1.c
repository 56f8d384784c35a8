/* Timer on an AVR's 16-bit Timer1 (ATmega328P and relatives), extended to 64 bits by counting its
 * overflows in an interrupt. Normal mode, counting 0..0xFFFF from the CPU clock through the
 * prescaler, which timer.frequency_hz selects: it must be cpu.clock_hz divided by 1, 8, 64, 256
 * or 1024 (1 gives CPU cycles: one overflow interrupt every 65536 cycles, 4.1 ms at 16 MHz).
 *
 * An overflow sets TOV1 and requests the interrupt, which clears TOV1 when it runs. Whoever sees
 * the overflow first counts it: the handler, or mb_timer_now with interrupts off, which then
 * clears TOV1 itself (cancelling the pending interrupt), so each overflow is counted once. */
#include <avr/interrupt.h>
#include <avr/io.h>

#include "mb_board_config.h"
#include "microbuild/platform.h"

#if (MB_TIMER_HZ) == (MB_CPU_CLOCK_HZ)
#define TIMER1_CLOCK_SELECT _BV(CS10)
#elif (MB_TIMER_HZ) * 8 == (MB_CPU_CLOCK_HZ)
#define TIMER1_CLOCK_SELECT _BV(CS11)
#elif (MB_TIMER_HZ) * 64 == (MB_CPU_CLOCK_HZ)
#define TIMER1_CLOCK_SELECT (_BV(CS11) | _BV(CS10))
#elif (MB_TIMER_HZ) * 256 == (MB_CPU_CLOCK_HZ)
#define TIMER1_CLOCK_SELECT _BV(CS12)
#elif (MB_TIMER_HZ) * 1024 == (MB_CPU_CLOCK_HZ)
#define TIMER1_CLOCK_SELECT (_BV(CS12) | _BV(CS10))
#else
#error "avr_timer1: timer.frequency_hz must be cpu.clock_hz / 1, 8, 64, 256 or 1024 (Timer1's prescaler)"
#endif

/* Overflows so far: the count above Timer1's 16 bits. */
static volatile uint64_t overflows;

ISR(TIMER1_OVF_vect)
{
    overflows++;
}

void mb_timer_init(void)
{
    TCCR1B = 0; /* stopped */
    TCCR1A = 0; /* normal mode: count up to 0xFFFF, wrap to 0 */
    TCNT1 = 0;
    TIFR1 = _BV(TOV1); /* writing 1 clears the flag */
    overflows = 0;
    TIMSK1 = _BV(TOIE1);
    TCCR1B = (uint8_t)(TIMER1_CLOCK_SELECT);
    sei();
}

uint64_t mb_timer_now(void)
{
    const uint8_t sreg = SREG;
    cli();
    uint16_t count = TCNT1; /* 16-bit read: low byte first latches the high byte */
    uint64_t high = overflows;
    if (TIFR1 & _BV(TOV1)) {
        /* Wrapped and not yet counted: count it here, and read the counter again since the
         * first read may predate the wrap. */
        TIFR1 = _BV(TOV1);
        high++;
        overflows = high;
        count = TCNT1;
    }
    SREG = sreg;
    return (high << 16) | count;
}
