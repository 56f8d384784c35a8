/* Console over Arm semihosting: the host's ":tt" stream (SYS_OPEN, SYS_READ, SYS_WRITE), for
 * emulated Arm boards whose UART model moves one byte per emulator main-loop turn.
 *
 * QEMU's CMSDK UART holds one received byte: every byte the host sends costs a round of QEMU's
 * I/O loop and the guest's polling (about 21 KiB/s here, and far less on a loaded machine).
 * QEMU 7.2 (-semihosting-config target=native) maps ":tt" to its own stdin and stdout, so one
 * SYS_READ takes whatever the pipe holds, up to a whole buffer, and the guest waits inside the
 * read instead of polling. The bytes are the same either way: the RPC framing and its CRCs are
 * untouched. When the host closes the stream the firmware exits (as the host board's does). */
#include <stddef.h>
#include <stdint.h>

#include "mb_board_config.h"
#include "microbuild/platform.h"
#include "microbuild/semihosting.h"

#if !defined(__arm__)
#error "the semihosting console is Arm semihosting (BKPT 0xAB): an Arm board's driver only"
#endif

/* SYS_OPEN modes (fopen's "r" and "w"): ":tt" opened for reading is the console's input. */
#define OPEN_READ 0u
#define OPEN_WRITE 4u

/* What one SYS_READ may bring: QEMU's semihosting console buffers up to 1 KiB. */
#define READ_BUFFER_BYTES 1024u

static uint32_t input_handle;
static uint32_t output_handle;
/* Global, not static: its symbol tells the QEMU runner which console the firmware has. */
extern uint8_t mb_semihosting_console_input[READ_BUFFER_BYTES];
uint8_t mb_semihosting_console_input[READ_BUFFER_BYTES];
static uint32_t received_count;
static uint32_t received_next;

static uint32_t open_console(uint32_t mode)
{
    static const char name[] = ":tt";
    const uint32_t block[3] = {(uint32_t)(uintptr_t)name, mode, (uint32_t)(sizeof name - 1u)};
    return mb_semihosting_call(MB_SEMIHOSTING_SYS_OPEN, block);
}

void mb_console_init(void)
{
    input_handle = open_console(OPEN_READ);
    output_handle = open_console(OPEN_WRITE);
    received_count = received_next = 0u;
}

void mb_console_write(const void *data, size_t length)
{
    const uint8_t *bytes = (const uint8_t *)data;
    while (length > 0u) {
        const uint32_t block[3] = {output_handle, (uint32_t)(uintptr_t)bytes, (uint32_t)length};
        /* SYS_WRITE answers with the bytes it did not write. */
        const uint32_t left = mb_semihosting_call(MB_SEMIHOSTING_SYS_WRITE, block);
        if (left >= length) {
            return; /* the host refused it: nothing more can go out */
        }
        bytes += length - left;
        length = left;
    }
}

int mb_console_try_read(void)
{
    /* Semihosting has no read that returns at once when nothing came: only what an earlier read
     * brought counts as waiting. */
    if (received_next == received_count) {
        return -1;
    }
    return mb_semihosting_console_input[received_next++];
}

uint8_t mb_console_read(void)
{
    while (received_next == received_count) {
        const uint32_t block[3] = {input_handle, (uint32_t)(uintptr_t)mb_semihosting_console_input,
                                   READ_BUFFER_BYTES};
        /* SYS_READ waits until at least one byte is there and answers with the bytes it did not
         * read. */
        const uint32_t left = mb_semihosting_call(MB_SEMIHOSTING_SYS_READ, block);
        if (left >= READ_BUFFER_BYTES) {
            mb_exit(0); /* end of input (or an error): nobody is left to talk to */
        }
        received_count = READ_BUFFER_BYTES - left;
        received_next = 0u;
    }
    return mb_semihosting_console_input[received_next++];
}
