/* Exit through Arm semihosting (QEMU with -semihosting-config enable=on, or a debugger with
 * semihosting on): SYS_EXIT_EXTENDED ends the session with `status` as the exit code.
 * Without a semihosting host the BKPT faults; that is why this is the QEMU boards' driver only. */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

void mb_exit(int status)
{
    /* Parameter block {reason, exit code}; r0 = operation, r1 = block. BKPT 0xAB is the
     * semihosting call on every M-profile core (Thumb). */
    const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
    register uint32_t operation __asm__("r0") = SYS_EXIT_EXTENDED;
    register const uint32_t *argument __asm__("r1") = block;
    __asm__ volatile ("bkpt 0xab" : "+r"(operation) : "r"(argument) : "memory");
    for (;;) {
        /* The host did not end the session (e.g. a debugger that only logs the call). */
    }
}
