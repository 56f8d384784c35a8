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

/* Bytes read from stdin and not handed out yet: one read() takes what the pipe holds, instead of
 * a system call per byte (an RPC upload of a 96x96 image is 9,216 bytes). */
static unsigned char pending[4096];
static size_t pending_count;
static size_t pending_next;

/* One byte from stdin: the byte, -1 at end of input, -2 on any other error. */
static int read_byte(void)
{
    while (pending_next == pending_count) {
        const ssize_t got = read(STDIN_FILENO, pending, sizeof pending);
        if (got > 0) {
            pending_count = (size_t)got;
            pending_next = 0;
        } else if (got == 0) {
            return -1;
        } else if (errno != EINTR) {
            return -2;
        }
    }
    return pending[pending_next++];
}

int mb_console_try_read(void)
{
    if (pending_next < pending_count) {
        return pending[pending_next++];
    }
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
