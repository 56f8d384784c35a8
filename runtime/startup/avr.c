/* AVR (avr-gcc + avr-libc): hooks microbuild's start-up contract into avr-libc's own start-up.
 *
 * There is no reset handler here. avr-libc's crt<mcu>.o holds the vector table and runs the
 * .initN sections in order: .init2 clears r1 (__zero_reg__) and sets SP to the top of RAM,
 * .init4 copies .data (which on AVR includes .rodata and the model weights) from flash and clears
 * .bss, .init9 calls main and passes its return value to exit(). exit() runs the .finiN sections
 * and ends in .fini0 (cli, loop forever).
 *
 * So, as on the Arm and RISC-V boards:
 *   .init8: mb_board_init(), mb_console_init() and mb_timer_init() run before main, with .data
 *           and .bss ready;
 *   .fini8: main's return value (still in r24:r25, the register pair of exit()'s int argument and
 *           equally of mb_exit()'s) goes to mb_exit(), before any .fini6 destructor could use them.
 *
 * Code in .initN/.finiN is executed inline, falling through from one section to the next, so both
 * functions are naked (no prologue, no ret) and hold nothing but a call or jump. This file is
 * linked as an object, not from the runtime library: nothing references these functions, and
 * avr-ld's default script KEEPs the sections. */
#include "mb_board_config.h"
#include "microbuild/platform.h"

#ifndef __AVR__
#error "runtime/startup/avr.c is for AVR (avr-gcc) only"
#endif

/* Devices with less than 8 KiB of flash have no CALL/JMP: use the relative forms there. */
#ifdef __AVR_HAVE_JMP_CALL__
#define MB_AVR_CALL "call"
#define MB_AVR_JMP "jmp"
#else
#define MB_AVR_CALL "rcall"
#define MB_AVR_JMP "rjmp"
#endif

void mb_avr_init8(void) __attribute__((naked, used, section(".init8")));
void mb_avr_fini8(void) __attribute__((naked, used, section(".fini8")));

void mb_avr_init8(void)
{
    __asm__ volatile (MB_AVR_CALL " mb_board_init\n\t"
                      MB_AVR_CALL " mb_console_init\n\t" /* open before main: its first output prints */
                      MB_AVR_CALL " mb_timer_init");
}

void mb_avr_fini8(void)
{
    __asm__ volatile (MB_AVR_JMP " mb_exit"); /* noreturn: .fini7 .. .fini0 never run */
}
