/* The fake board's console, timer and exit for the RPC server's C tests (see fake_platform.h):
 * output captured in memory, a timer that steps on every read. */
#include "fake_platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbuild/platform.h"

uint8_t *fake_output;
size_t fake_output_length;
static size_t output_capacity;
unsigned long fake_timer_reads;
static uint64_t now;

void fake_output_clear(void)
{
    fake_output_length = 0;
}

void mb_console_init(void)
{
}

void mb_console_write(const void *data, size_t length)
{
    if (fake_output_length + length > output_capacity) {
        output_capacity = (fake_output_length + length) * 2u + 4096u;
        fake_output = realloc(fake_output, output_capacity);
        if (fake_output == NULL) {
            fputs("fake console: out of memory\n", stderr);
            abort();
        }
    }
    memcpy(fake_output + fake_output_length, data, length);
    fake_output_length += length;
}

int mb_console_try_read(void)
{
    return -1;
}

uint8_t mb_console_read(void)
{
    fputs("fake console: the tests feed the server, it must never read\n", stderr);
    abort();
}

void mb_timer_init(void)
{
}

uint64_t mb_timer_now(void)
{
    fake_timer_reads++;
    now += FAKE_TIMER_STEP;
    return now;
}

void mb_exit(int status)
{
    exit(status);
}
