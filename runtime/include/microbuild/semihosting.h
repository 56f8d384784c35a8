/* Arm semihosting calls (M-profile: BKPT 0xAB, operation in r0, parameter block in r1, result in
 * r0). Used by the semihosting exit and console drivers; only QEMU (-semihosting-config
 * enable=on) or a debugger with semihosting on answers them: without one the BKPT faults. */
#ifndef MICROBUILD_SEMIHOSTING_H
#define MICROBUILD_SEMIHOSTING_H

#include <stdint.h>

#define MB_SEMIHOSTING_SYS_OPEN 0x01u
#define MB_SEMIHOSTING_SYS_WRITE 0x05u
#define MB_SEMIHOSTING_SYS_READ 0x06u
#define MB_SEMIHOSTING_SYS_EXIT_EXTENDED 0x20u

static inline uint32_t mb_semihosting_call(uint32_t operation, const void *block)
{
    register uint32_t r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = block;
    __asm__ volatile ("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

#endif /* MICROBUILD_SEMIHOSTING_H */
