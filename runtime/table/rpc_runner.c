/* The table runner as an RPC firmware's server calls it (mb_rpc_table_runner in
 * microbuild/rpc.h): linked into an RPC firmware built with a kernel set, so the host can upload
 * a model blob and run it at once (`microbuild run --blob`), without flashing. */
#include "microbuild/rpc.h"
#include "microbuild/table.h"

static int check(const uint8_t *blob, uint32_t size, uint32_t workspace_bytes, int32_t *bad_op)
{
    return (int)mb_table_check(blob, size, workspace_bytes, bad_op);
}

static const char *status_name(int status)
{
    return mb_table_status_name((mb_table_status)status);
}

const mb_rpc_table_runner_t mb_rpc_table_runner = {check, status_name, mb_table_reset_state,
                                                   mb_table_run};
