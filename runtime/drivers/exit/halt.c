/* Exit on a real board: nothing to return to, so stop with interrupts off and sleep forever
 * (a debugger can still attach and read the state). */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#if defined(__AVR__)
#include <avr/interrupt.h>
#include <avr/sleep.h>
#endif

void mb_exit(int status)
{
    (void)status;
#if defined(__arm__)
    __asm__ volatile ("cpsid i" ::: "memory");
#elif defined(__AVR__)
    /* Idle sleep stops only the CPU: the USART still shifts out the last bytes written. With
     * the I flag clear no interrupt is taken (simavr ends the simulation here). */
    cli();
    set_sleep_mode(SLEEP_MODE_IDLE);
    sleep_enable();
#endif
    for (;;) {
#if defined(__arm__) || defined(__riscv)
        /* With interrupts masked nothing is taken, but a pending one still ends WFI: loop. On
         * RISC-V, interrupts stay disabled: microbuild's runtime never enables them (mstatus.MIE). */
        __asm__ volatile ("wfi");
#elif defined(__AVR__)
        sleep_cpu();
#endif
    }
}
