/* The host-driven (RPC) executor's entry point: brings up the console and the timer and serves
 * the host forever (runtime/rpc/server.c, protocol in docs/rpc-protocol.md). The board's start-up
 * code has already called mb_board_init(). */
#include "microbuild/platform.h"
#include "microbuild/rpc.h"

int main(void)
{
    mb_console_init();
    mb_timer_init();
    mb_rpc_server_run();
    /* Not reached on a board (the server never returns); on the host the end of stdin exits from
     * inside mb_console_read(). */
    return 0;
}
