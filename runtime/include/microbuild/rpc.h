/* The host-driven (RPC) executor: a server on the console UART that lets the host upload tensors,
 * call operators one by one, time them and read results (protocol: docs/rpc-protocol.md).
 *
 * microbuild generates one table (mb_rpc_models.c) describing the models linked into the
 * firmware and the arena they live in; runtime/rpc/ is the same for every board and model.
 */
#ifndef MICROBUILD_RPC_H
#define MICROBUILD_RPC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MB_RPC_PROTOCOL_VERSION 2u

/* Receive buffer: the largest packet payload the device accepts (WRITE data is streamed past it). */
#ifndef MB_RPC_MAX_PACKET
#define MB_RPC_MAX_PACKET 512u
#endif

typedef struct {
    const char *name;  /* "<prefix>.<op index>.<OPCODE>" */
    uint16_t op_index; /* the operator's index in the model */
    uint8_t inputs;    /* tensor operands read */
    uint8_t outputs;   /* tensor operands written */
} mb_rpc_op;

typedef struct {
    const char *name;                                  /* the model's C prefix */
    int (*run)(uint8_t *workspace);                    /* <prefix>_run on the slot pointers */
    int (*run_op)(uint32_t index, uint8_t *workspace); /* <prefix>_run_op: the index-th operator
                                                          in execution order (ops[index]) */
    uint32_t workspace_offset;                         /* where its workspace is in the arena */
    uint32_t workspace_bytes;
    uint32_t input_count;
    uint32_t output_count;
    uint32_t op_count;
    const mb_rpc_op *ops;                              /* op_count entries, execution order */
} mb_rpc_model;

extern const mb_rpc_model mb_rpc_models[];
extern const uint32_t mb_rpc_model_count;

/* The arena: every model's workspace at its offset, then the pool ALLOC hands out from
 * [mb_rpc_pool_offset, mb_rpc_arena_bytes). Lives in .bss.mb_workspace (never cleared). */
extern uint8_t mb_rpc_arena[];
extern const uint32_t mb_rpc_arena_bytes;
extern const uint32_t mb_rpc_pool_offset;

/* Identifies the build (board, models, options), so the host knows it talks to the firmware it
 * built. */
extern const uint8_t mb_rpc_build_id[8];

/* Runs the server forever: console and timer initialised by the caller. Equivalent to
 * mb_rpc_server_init() then mb_rpc_server_feed(mb_console_read()) in a loop. */
void mb_rpc_server_run(void);

/* The server without its loop, for a board that receives bytes some other way (an interrupt, a
 * USB stack) and for tests. Init (re)starts the server: allocations freed, no session, the boot
 * sequence (FF FE, TERMINATE, LOG) sent. Feed hands it one received byte; replies go out through
 * mb_console_write before it returns, and the operators a request runs run inside it. */
void mb_rpc_server_init(void);
void mb_rpc_server_feed(uint8_t byte);

/* The table runner of an RPC firmware built with a kernel set (`--kernels-for`): BLOB_LOAD and
 * BLOB_RUN (docs/rpc-protocol.md) check and run a model blob the host uploaded into the ALLOC
 * pool, the firmware's RAM slot. runtime/table/rpc_runner.c defines mb_rpc_table_runner over
 * runtime/table/mb_table.c; a firmware without it answers those requests UNKNOWN_OPCODE.
 * Plain function pointers, so that rpc.h needs nothing from table.h. */
typedef struct {
    /* mb_table_check: 0 (valid) or an mb_table_status; *bad_op the model op concerned or -1. */
    int (*check)(const uint8_t *blob, uint32_t size, uint32_t workspace_bytes, int32_t *bad_op);
    const char *(*status_name)(int status);
    void (*reset_state)(const uint8_t *blob, uint8_t *workspace);
    void (*run)(const uint8_t *blob, uint8_t *workspace);
} mb_rpc_table_runner_t;

/* Blocks ALLOC can hand out at once (the allocator's fixed table: 8 bytes of RAM each). */
#ifndef MB_RPC_MAX_ALLOCS
#define MB_RPC_MAX_ALLOCS 32u
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICROBUILD_RPC_H */
