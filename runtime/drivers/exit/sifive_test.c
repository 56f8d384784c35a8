/* Exit through the SiFive test device ("sifive,test0", QEMU RISC-V virt at 0x100000): the write
 * ends QEMU with `status` as its exit code.
 *
 * exit.base: the device's address (default 0x100000, where QEMU virt has it). */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef MB_EXIT_BASE
#define MB_EXIT_BASE 0x100000u
#endif

#define TEST_FINISHER (*(volatile uint32_t *)(uintptr_t)(MB_EXIT_BASE))
#define FINISHER_FAIL 0x3333u /* exit code in bits 31:16 */
#define FINISHER_PASS 0x5555u /* exit code 0 */

void mb_exit(int status)
{
    TEST_FINISHER = status == 0 ? FINISHER_PASS : (((uint32_t)status << 16) | FINISHER_FAIL);
    for (;;) {
    }
}
