/* The C library's way out to the board: printf, puts, getchar and scanf on the console.
 *
 * Linked as an object next to the start-up code (not from the runtime library: the C library,
 * linked after it, is what refers to these, and an archive member is only taken for a symbol
 * that is already wanted). A firmware that never uses stdio keeps none of it (--gc-sections).
 * Every definition is weak, so a program that has its own (_write to a debugger's ITM, say) wins.
 *
 * - newlib / newlib-nano (arm-none-eabi-gcc): the POSIX-like system calls its stdio and malloc
 *   end in (_write, _read, _fstat, _isatty, _close, _lseek, _sbrk, _exit, _kill, _getpid).
 *   File descriptors 0, 1 and 2 are the console; there are no files.
 * - picolibc (clang, riscv64-unknown-elf-gcc, or any board with libc: picolibc): its stdio takes
 *   the streams stdin, stdout and stderr from the program; all three are the console, unbuffered.
 *   Its malloc asks sbrk for memory, and exit() ends in _exit.
 *
 * The console and timer are already open when main runs (the start-up code calls
 * mb_console_init and mb_timer_init), so the first printf prints. Input is raw: no echo and no
 * line editing; "\n" goes out as it is. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "microbuild/platform.h"

#define MB_WEAK __attribute__((weak))

/* Called by the start-up code between main's return and mb_exit. */
void mb_stdio_flush(void);

/* The heap the linker script reserves (memory.heap_size in the board YAML; 0 by default, and then
 * every allocation fails: newlib's stdio falls back to unbuffered streams). */
extern char __mb_heap_start[];
extern char __mb_heap_end[];

static char *heap_top = __mb_heap_start;

/* Grows the heap by increment bytes; (void *)-1 with errno ENOMEM when it would pass the end. */
static void *grow_heap(intptr_t increment)
{
    char *const previous = heap_top;
    if (increment > __mb_heap_end - heap_top || increment < __mb_heap_start - heap_top) {
        errno = ENOMEM;
        return (void *)-1;
    }
    heap_top += increment;
    return previous;
}

#if defined(__PICOLIBC__)

static int console_put(char c, FILE *stream)
{
    (void)stream;
    mb_console_write(&c, 1u);
    return (unsigned char)c;
}

static int console_get(FILE *stream)
{
    (void)stream;
    return mb_console_read();
}

static FILE console_stream = FDEV_SETUP_STREAM(console_put, console_get, NULL, _FDEV_SETUP_RW);

FILE *const stdin MB_WEAK = &console_stream;
FILE *const stdout MB_WEAK = &console_stream;
FILE *const stderr MB_WEAK = &console_stream;

void *sbrk(intptr_t increment) MB_WEAK;
void *sbrk(intptr_t increment)
{
    return grow_heap(increment);
}

void _exit(int status) MB_WEAK __attribute__((noreturn));
void _exit(int status)
{
    mb_exit(status);
}

/* picolibc's streams above write each character through at once: nothing to flush. */
void mb_stdio_flush(void)
{
}

#elif defined(_NEWLIB_VERSION)

#include <sys/stat.h>

/* newlib declares these in no header the firmware includes. */
int _write(int file, const char *data, int length);
int _read(int file, char *buffer, int length);
int _close(int file);
int _lseek(int file, int offset, int whence);
int _fstat(int file, struct stat *status);
int _isatty(int file);
void *_sbrk(intptr_t increment);
void _exit(int status) __attribute__((noreturn));
int _kill(int process, int signal);
int _getpid(void);

/* Blocks for the first byte, then takes whatever else is already waiting (up to length): a
 * read returns as soon as there is something, as a terminal's does, so getchar and scanf see
 * each line as it arrives without waiting for a full buffer. */
static int read_console(char *buffer, int length)
{
    if (length <= 0) {
        return 0;
    }
    int count = 0;
    buffer[count++] = (char)mb_console_read();
    while (count < length) {
        const int next = mb_console_try_read();
        if (next < 0) {
            break;
        }
        buffer[count++] = (char)next;
    }
    return count;
}

static int is_console(int file)
{
    return file >= 0 && file <= 2;
}

MB_WEAK int _write(int file, const char *data, int length)
{
    if (!is_console(file) || length < 0) {
        errno = EBADF;
        return -1;
    }
    mb_console_write(data, (size_t)length);
    return length;
}

MB_WEAK int _read(int file, char *buffer, int length)
{
    if (!is_console(file)) {
        errno = EBADF;
        return -1;
    }
    return read_console(buffer, length);
}

MB_WEAK int _close(int file)
{
    (void)file;
    errno = EBADF;
    return -1;
}

MB_WEAK int _lseek(int file, int offset, int whence)
{
    (void)file;
    (void)offset;
    (void)whence;
    errno = ESPIPE; /* a console cannot seek */
    return -1;
}

MB_WEAK int _fstat(int file, struct stat *status)
{
    if (!is_console(file)) {
        errno = EBADF;
        return -1;
    }
    status->st_mode = S_IFCHR; /* a character device: stdout is line-buffered, as on a terminal */
    return 0;
}

MB_WEAK int _isatty(int file)
{
    return is_console(file);
}

MB_WEAK void *_sbrk(intptr_t increment)
{
    return grow_heap(increment);
}

MB_WEAK void _exit(int status)
{
    mb_exit(status);
}

MB_WEAK int _kill(int process, int signal)
{
    (void)process;
    (void)signal;
    errno = EINVAL;
    return -1;
}

MB_WEAK int _getpid(void)
{
    return 1;
}

/* A weak reference: fflush is only linked (and so only non-null) in a program that uses stdio. */
#pragma weak fflush

/* main's return goes straight to mb_exit (no exit(), no atexit handlers): write out what a
 * line-buffered stdout still holds, e.g. a last printf without "\n". */
void mb_stdio_flush(void)
{
    if (fflush != NULL) {
        fflush(NULL);
    }
}

#else
#error "runtime/startup/libc_syscalls.c: neither newlib nor picolibc (which C library is this?)"
#endif
