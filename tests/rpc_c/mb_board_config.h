/* The board configuration microbuild would generate, for the RPC server's tests and for the
 * cross-compile checks of runtime/rpc/. */
#ifndef MB_BOARD_CONFIG_H
#define MB_BOARD_CONFIG_H

#define MB_BOARD_NAME "test-board"
#define MB_TIMER_HZ 1000000u

#endif /* MB_BOARD_CONFIG_H */
