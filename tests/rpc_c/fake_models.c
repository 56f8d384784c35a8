/* The fake board's model table for the RPC server's C tests (see fake_platform.h): two tiny
 * models over a 4000-byte arena followed by a guard zone. Linked with the fake console in the
 * scripted and fuzz tests, and with the real host drivers in the end-to-end test. */
#include "fake_platform.h"

#include <string.h>

#include "microbuild/rpc.h"

unsigned long fake_op_calls;

/* m0: workspace [0, 64): op 0 writes in[0..15] + 1 to [16..31], op 1 writes [16..31] + 1 to
 *     [32..47]; the model runs both.
 * m1: workspace [64, 96): op 0 sets ws[1] = ws[0] + 1 and counts its runs in ws[2]; it fails
 *     (returns 7) when ws[0] is 0xEE. */

/* The array is longer than mb_rpc_arena_bytes says: the tail is a guard zone that no access the
 * server makes may touch (ASan only sees the array's real end). */
uint8_t mb_rpc_arena[FAKE_ARENA_BYTES + FAKE_GUARD_BYTES];
const uint32_t mb_rpc_arena_bytes = FAKE_ARENA_BYTES;
const uint32_t mb_rpc_pool_offset = FAKE_POOL_OFFSET;
const uint8_t mb_rpc_build_id[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static int m0_run_op(uint32_t index, uint8_t *workspace)
{
    fake_op_calls++;
    if (index > 1u) {
        return -1;
    }
    for (unsigned i = 0; i < 16u; i++) {
        workspace[16u * (index + 1u) + i] = (uint8_t)(workspace[16u * index + i] + 1u);
    }
    return 0;
}

static int m0_run(uint8_t *workspace)
{
    int status = m0_run_op(0, workspace);
    if (status == 0) {
        status = m0_run_op(1, workspace);
    }
    return status;
}

static int m1_run_op(uint32_t index, uint8_t *workspace)
{
    fake_op_calls++;
    if (index != 0u) {
        return -1;
    }
    workspace[1] = (uint8_t)(workspace[0] + 1u);
    workspace[2]++;
    return workspace[0] == 0xEEu ? 7 : 0;
}

static int m1_run(uint8_t *workspace)
{
    return m1_run_op(0, workspace);
}

static const mb_rpc_op m0_ops[] = {
    {"m0.0.ADD", 0, 1, 1},
    {"m0.1.ADD", 1, 1, 1},
};
static const mb_rpc_op m1_ops[] = {
    {"m1.0.INC", 0, 1, 1},
};

const mb_rpc_model mb_rpc_models[] = {
    {"m0", m0_run, m0_run_op, 0, 64, 1, 1, 2, m0_ops},
    {"m1", m1_run, m1_run_op, 64, 32, 1, 1, 1, m1_ops},
};
const uint32_t mb_rpc_model_count = 2;

void fake_models_init(void)
{
    memset(mb_rpc_arena + FAKE_ARENA_BYTES, FAKE_GUARD_VALUE, FAKE_GUARD_BYTES);
}

int fake_guard_ok(void)
{
    for (unsigned i = 0; i < FAKE_GUARD_BYTES; i++) {
        if (mb_rpc_arena[FAKE_ARENA_BYTES + i] != FAKE_GUARD_VALUE) {
            return 0;
        }
    }
    return 1;
}
