/* Exit on a real board: nothing to return to, so stop with interrupts off and sleep forever
 * (a debugger can still attach and read the state). */
#include "mb_board_config.h"
#include "microbuild/platform.h"

void mb_exit(int status)
{
    (void)status;
#if defined(__arm__)
    __asm__ volatile ("cpsid i" ::: "memory");
#endif
    for (;;) {
#if defined(__arm__) || defined(__riscv)
        /* With interrupts masked nothing is taken, but a pending one still ends WFI: loop. On
         * RISC-V, interrupts stay disabled: microbuild's runtime never enables them (mstatus.MIE). */
        __asm__ volatile ("wfi");
#endif
    }
}
