/* Console on the host: the process's standard input and output, unbuffered (every write goes
 * straight to fd 1, so nothing is lost if the process is killed). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "mb_board_config.h"
#include "microbuild/platform.h"

void mb_console_init(void)
{
}

void mb_console_write(const void *data, size_t length)
{
    const char *bytes = (const char *)data;
    while (length > 0u) {
        const ssize_t written = write(STDOUT_FILENO, bytes, length);
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return; /* stdout is gone (closed pipe): nobody is left to read it */
        }
        bytes += written;
        length -= (size_t)written;
    }
}

/* One byte from stdin: the byte, -1 at end of input, -2 on any other error. */
static int read_byte(void)
{
    unsigned char byte;
    for (;;) {
        const ssize_t got = read(STDIN_FILENO, &byte, 1);
        if (got == 1) {
            return byte;
        }
        if (got == 0) {
            return -1;
        }
        if (errno != EINTR) {
            return -2;
        }
    }
}

int mb_console_try_read(void)
{
    struct pollfd fd = {STDIN_FILENO, POLLIN, 0};
    int ready;
    do {
        ready = poll(&fd, 1, 0);
    } while (ready < 0 && errno == EINTR);
    if (ready <= 0 || (fd.revents & (POLLIN | POLLHUP)) == 0) {
        return -1;
    }
    const int byte = read_byte();
    return byte < 0 ? -1 : byte;
}

uint8_t mb_console_read(void)
{
    const int byte = read_byte();
    if (byte < 0) {
        /* End of input (or a broken stdin): no byte will ever come, so stop rather than spin. */
        mb_exit(0);
    }
    return (uint8_t)byte;
}
