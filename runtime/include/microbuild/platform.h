/* What every microbuild firmware needs from the board it runs on: bring-up, a console, a timer
 * and a way to stop.
 *
 * Each function has one implementation per driver under runtime/drivers/{console,timer,exit}/;
 * the board YAML names the driver (transport.driver, timer.driver, exit.driver) and microbuild
 * compiles exactly that file. A board may instead name a C file of its own there (a value ending
 * in .c, relative to the board file; board_defs/lm3s6965evb/pl011_console.c is one), which
 * implements the same functions, and `init_source:` for mb_board_init. Drivers take their addresses and clocks from the generated
 * header "mb_board_config.h" (MB_CONSOLE_BASE, MB_CONSOLE_BAUD, MB_CONSOLE_OPT_<KEY>,
 * MB_TIMER_HZ, MB_EXIT_BASE, MB_CPU_CLOCK_HZ, MB_BOARD_NAME), so a driver is written once and
 * serves every board that has that peripheral.
 *
 * Start-up order (runtime/startup/): reset handler -> FPU/MVE enable where the build may use them
 * (before any loop the compiler could vectorise) -> .data copy / .bss clear (from the linker
 * script's copy and zero tables) -> mb_board_init() -> mb_console_init() -> mb_timer_init() ->
 * constructors -> main() -> stdio flushed -> mb_exit(main's return value).
 * On the host the C library's own start-up runs main. On AVR avr-libc's start-up does the copy
 * and clear and runs main; runtime/startup/avr.c calls the three inits from .init8 and passes
 * main's return value to mb_exit() from .fini8, so the order is the same.
 *
 * Your own main() (executor app): the console and timer are already open, and printf, puts,
 * getchar and scanf use the console (newlib's syscalls, picolibc's streams: startup/libc_syscalls.c).
 */
#ifndef MICROBUILD_PLATFORM_H
#define MICROBUILD_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The board's `init:` snippet from its YAML, wrapped in a function by microbuild (generated
 * mb_board_init.c). Runs before main with .data/.bss ready, before any driver's init. */
void mb_board_init(void);

/* Console UART (transport.driver). Init leaves TX and RX enabled at MB_CONSOLE_BAUD. */
void mb_console_init(void);
/* Blocks until every byte has been handed to the UART. */
void mb_console_write(const void *data, size_t length);
/* Returns the next received byte (0..255), or -1 at once if none is waiting. */
int mb_console_try_read(void);
/* Blocks until a byte arrives. On the host, the end of stdin ends the program (mb_exit(0)). */
uint8_t mb_console_read(void);

/* Free-running timer (timer.driver) counting at MB_TIMER_HZ. mb_timer_now() is monotonic and
 * never wraps in practice (drivers with narrower counters extend them to 64 bits). */
void mb_timer_init(void);
uint64_t mb_timer_now(void);

/* Stops the program (exit.driver): semihosting exit on QEMU Arm boards, the test device on
 * QEMU RISC-V virt, exit() on the host, and a low-power halt on real boards. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noreturn))
#endif
void mb_exit(int status);

/* Console text helpers (runtime/support/print.c), so firmware never needs printf. */
void mb_print(const char *text);
void mb_print_u64(uint64_t value);             /* decimal */
void mb_print_i32(int32_t value);              /* decimal, with '-' */
void mb_print_hex(const void *data, size_t length); /* two lower-case hex digits per byte */

#ifdef __cplusplus
}
#endif

#endif /* MICROBUILD_PLATFORM_H */
