/* Timer on the RISC-V machine cycle counter (RV32: mcycleh:mcycle). timer.frequency_hz must be
 * the core clock. On QEMU it counts instructions. */
#include "mb_board_config.h"
#include "microbuild/platform.h"

/* Encoded as csrrs rd, csr, x0 through .insn: plain csrr needs the Zicsr extension, which GCC 12's
 * default ISA spec leaves out of rv32imac. The immediate is the CSR number as a signed 12-bit
 * value (0xB00 - 0x1000 = -1280). */
#define CSR_MCYCLE  "-1280" /* 0xB00 */
#define CSR_MCYCLEH "-1152" /* 0xB80 */
#define READ_CSR(csr, out) __asm__ volatile (".insn i 0x73, 2, %0, x0, " csr : "=r"(out))

void mb_timer_init(void)
{
    /* mcycle runs from reset; nothing to start. */
}

uint64_t mb_timer_now(void)
{
    uint32_t high, low, high_again;
    do {
        READ_CSR(CSR_MCYCLEH, high);
        READ_CSR(CSR_MCYCLE, low);
        READ_CSR(CSR_MCYCLEH, high_again);
    } while (high != high_again); /* mcycle wrapped between the reads */
    return ((uint64_t)high << 32) | low;
}
