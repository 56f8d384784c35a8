/* Timer on the host: CLOCK_MONOTONIC in nanoseconds (timer.frequency_hz: 1000000000). */
#define _POSIX_C_SOURCE 200809L

#include <time.h>

#include "mb_board_config.h"
#include "microbuild/platform.h"

void mb_timer_init(void)
{
}

uint64_t mb_timer_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}
