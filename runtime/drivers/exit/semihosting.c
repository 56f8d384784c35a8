/* Exit through Arm semihosting (QEMU with -semihosting-config enable=on, or a debugger with
 * semihosting on): SYS_EXIT_EXTENDED ends the session with `status` as the exit code.
 * Without a semihosting host the BKPT faults; that is why this is the QEMU boards' driver only. */
#include "mb_board_config.h"
#include "microbuild/platform.h"
#include "microbuild/semihosting.h"

#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

void mb_exit(int status)
{
    /* Parameter block {reason, exit code}. */
    const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
    (void)mb_semihosting_call(MB_SEMIHOSTING_SYS_EXIT_EXTENDED, block);
    for (;;) {
        /* The host did not end the session (e.g. a debugger that only logs the call). */
    }
}
