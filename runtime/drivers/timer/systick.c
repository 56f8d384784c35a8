/* Timer on the Cortex-M SysTick: the 24-bit down-counter on the processor clock, extended to 64
 * bits by counting its wraps. timer.frequency_hz must be the core clock.
 *
 * A wrap sets COUNTFLAG (cleared by reading CSR) and raises the SysTick exception. Whoever reads
 * COUNTFLAG set first, the handler or mb_timer_now, adds the wrap, so each wrap is counted once
 * even while interrupts are masked. */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)

#define CSR_ENABLE    (1u << 0)
#define CSR_TICKINT   (1u << 1)
#define CSR_CLKSOURCE (1u << 2) /* processor clock */
#define CSR_COUNTFLAG (1u << 16)

#define RELOAD 0xFFFFFFu
#define PERIOD (RELOAD + 1u) /* ticks between two wraps */

/* Ticks up to the start of the current period. */
static volatile uint64_t period_start;

void mb_systick_handler(void);

void mb_systick_handler(void)
{
    if (SYST_CSR & CSR_COUNTFLAG) {
        period_start += PERIOD;
    }
}

void mb_timer_init(void)
{
    SYST_CSR = 0u;
    SYST_RVR = RELOAD;
    SYST_CVR = 0u; /* any write clears the counter and COUNTFLAG */
    period_start = 0u;
    SYST_CSR = CSR_ENABLE | CSR_TICKINT | CSR_CLKSOURCE;
    __asm__ volatile ("cpsie i" ::: "memory");
}

uint64_t mb_timer_now(void)
{
    uint32_t primask;
    __asm__ volatile ("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");

    uint32_t count = SYST_CVR;
    if (SYST_CSR & CSR_COUNTFLAG) {
        /* Wrapped and not yet counted: count it here (the pending handler will find COUNTFLAG
         * clear), and read the counter again since the first read may predate the wrap. */
        period_start += PERIOD;
        count = SYST_CVR;
    }
    /* The counter reaches 0 at the wrap, then reloads: 0 starts a period, RELOAD..1 follow. */
    const uint64_t now = period_start + ((PERIOD - count) & RELOAD);

    __asm__ volatile ("msr primask, %0" : : "r"(primask) : "memory");
    return now;
}
