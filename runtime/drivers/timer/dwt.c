/* Timer on the DWT cycle counter (Cortex-M3/M4/M7/M33/M55; not on Armv6-M). timer.frequency_hz
 * must be the core clock. QEMU does not implement CYCCNT (it reads 0): use systick there.
 *
 * CYCCNT is 32 bits and cannot interrupt, so wraps are found by comparing with the previous
 * reading. To never miss one, SysTick samples the counter every 2^24 cycles. */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#define SCB_CPUID    (*(volatile uint32_t *)0xE000ED00u)
#define DCB_DEMCR    (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL     (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT   (*(volatile uint32_t *)0xE0001004u)
#define DWT_LAR      (*(volatile uint32_t *)0xE0001FB0u)
#define SYST_CSR     (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR     (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR     (*(volatile uint32_t *)0xE000E018u)

#define DEMCR_TRCENA      (1u << 24)
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_LAR_KEY       0xC5ACCE55u
#define CPUID_PARTNO(id)  (((id) >> 4) & 0xFFFu)
#define PARTNO_CORTEX_M7  0xC27u
#define SYST_ENABLE_TICKINT_CPU ((1u << 0) | (1u << 1) | (1u << 2))

static volatile uint32_t high;      /* wraps seen so far */
static volatile uint32_t last_low;  /* CYCCNT at the previous reading */

void mb_systick_handler(void);

/* Reads CYCCNT and accounts for a wrap since the last reading; interrupts must be masked. */
static uint64_t sample(void)
{
    const uint32_t low = DWT_CYCCNT;
    if (low < last_low) {
        high = high + 1u;
    }
    last_low = low;
    return ((uint64_t)high << 32) | low;
}

void mb_systick_handler(void)
{
    (void)sample();
}

void mb_timer_init(void)
{
    DCB_DEMCR |= DEMCR_TRCENA;
    if (CPUID_PARTNO(SCB_CPUID) == PARTNO_CORTEX_M7) {
        DWT_LAR = DWT_LAR_KEY; /* the M7's DWT ignores writes until unlocked */
    }
    DWT_CYCCNT = 0u;
    high = 0u;
    last_low = 0u;
    DWT_CTRL |= DWT_CTRL_CYCCNTENA;

    SYST_CSR = 0u;
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0u;
    SYST_CSR = SYST_ENABLE_TICKINT_CPU;
    __asm__ volatile ("cpsie i" ::: "memory");
}

uint64_t mb_timer_now(void)
{
    uint32_t primask;
    __asm__ volatile ("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
    const uint64_t now = sample();
    __asm__ volatile ("msr primask, %0" : : "r"(primask) : "memory");
    return now;
}
