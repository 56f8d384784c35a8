/* A fake board for the RPC server's C tests: console output captured in memory, a timer that
 * advances by a fixed step on every read, and a two-model table over a small arena with a guard
 * zone behind it. */
#ifndef FAKE_PLATFORM_H
#define FAKE_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_ARENA_BYTES 4000u
#define FAKE_GUARD_BYTES 96u
#define FAKE_POOL_OFFSET 128u
#define FAKE_GUARD_VALUE 0xA5u
#define FAKE_TIMER_STEP 10u

/* Everything the server wrote to the console since the last fake_output_clear(). */
extern uint8_t *fake_output;
extern size_t fake_output_length;
void fake_output_clear(void);

/* Operator and model runs so far (tests check a cached reply ran nothing). */
extern unsigned long fake_op_calls;
extern unsigned long fake_timer_reads;

/* Fills the arena's guard zone; fake_guard_ok() says whether it is still intact. */
void fake_models_init(void);
int fake_guard_ok(void);

#endif /* FAKE_PLATFORM_H */
