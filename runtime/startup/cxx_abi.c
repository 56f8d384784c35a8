/* The few C++ ABI symbols a bare-metal firmware with C++ sources needs, for toolchains that ship
 * no libstdc++/libsupc++ (Debian's arm-none-eabi, riscv64-unknown-elf and avr toolchains).
 * Linked as an object only into firmware that has C++ sources; every definition is weak, so a C
 * or C++ library that has its own wins.
 *
 * - A global object with a destructor registers it with __cxa_atexit (__aeabi_atexit on Arm
 *   EABI) from its constructor. A firmware never runs static destructors: main's return value
 *   goes straight to mb_exit. So registering does nothing, and __dso_handle (normally from the
 *   C library's crtbegin.o, which -nostartfiles leaves out) only needs to exist.
 * - A call to a pure virtual function (a bug) ends the program with status 134, like an abort. */
#include "microbuild/platform.h"

void *__dso_handle __attribute__((weak)) = &__dso_handle;

int __cxa_atexit(void (*destructor)(void *), void *object, void *dso) __attribute__((weak));
int __cxa_atexit(void (*destructor)(void *), void *object, void *dso)
{
    (void)destructor;
    (void)object;
    (void)dso;
    return 0;
}

#if defined(__ARM_EABI__)
int __aeabi_atexit(void *object, void (*destructor)(void *), void *dso) __attribute__((weak));
int __aeabi_atexit(void *object, void (*destructor)(void *), void *dso)
{
    (void)destructor;
    (void)object;
    (void)dso;
    return 0;
}
#endif

void __cxa_pure_virtual(void) __attribute__((weak));
void __cxa_pure_virtual(void)
{
    mb_exit(134);
}
