/* Stand-in for the few Zephyr APIs a generated Zephyr application uses (tests only: there is no
 * Zephyr tree on this machine). Same names and signatures as Zephyr's. */
#ifndef MB_TEST_ZEPHYR_KERNEL_H
#define MB_TEST_ZEPHYR_KERNEL_H
#include <stdint.h>
uint32_t k_cycle_get_32(void);
uint32_t sys_clock_hw_cycles_per_sec(void);
void k_yield(void);
#endif
