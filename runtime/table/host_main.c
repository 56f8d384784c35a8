/* The table executor on the host: `runner model.mbm` checks the blob against the linked kernel
 * set, then runs it once per input set read from stdin (the inputs' bytes, one after the other)
 * and writes the outputs' bytes to stdout (a model's state carries over from one set to the
 * next). The ops' arguments are resolved once, before the first set (mb_table_prepare). A refused blob prints
 *   mb-table refused: <reason> (op <index>)
 * on stderr and exits with 10 + the mb_table_status, so a test or script can tell why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbuild/table.h"

#ifndef MB_TABLE_WORKSPACE_BYTES
#define MB_TABLE_WORKSPACE_BYTES (1u << 20)
#endif

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s model.mbm < inputs > outputs\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* Exactly the file's bytes, so AddressSanitizer catches the runner reading past a truncated
     * blob (malloc's blocks are 16-byte aligned on the 64-bit hosts this runs on; the check
     * refuses the blob otherwise). */
    uint8_t *blob = malloc(size > 0 ? (size_t)size : 1u);
    if (blob == NULL || fread(blob, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(f);
    int32_t bad_op = -1;
    const mb_table_status status = mb_table_check(blob, (size_t)size, MB_TABLE_WORKSPACE_BYTES,
                                                  &bad_op);
    if (status != MB_TABLE_OK) {
        fprintf(stderr, "mb-table refused: %s (op %ld)\n", mb_table_status_name(status),
                (long)bad_op);
        free(blob);
        return 10 + (int)status;
    }
    uint8_t *ws = malloc(mb_table_workspace_bytes(blob) + 1u);
    /* malloc's blocks are aligned for any type, so for the records' pointers. */
    const size_t record_bytes = mb_table_prepared_bytes(blob);
    void *records = malloc(record_bytes > 0u ? record_bytes : 1u);  /* exact: ASan sees overruns */
    mb_table_prepared prepared;
    if (ws == NULL || records == NULL ||
        mb_table_prepare(blob, ws, records, record_bytes, &prepared) != 0) {
        fprintf(stderr, "cannot allocate the workspace and op records\n");
        return 2;
    }
    const uint32_t n_in = mb_table_input_count(blob), n_out = mb_table_output_count(blob);
    /* The input sets are one stream: a model's state (at the workspace's end) starts from its
     * reset values and carries over from one set to the next, as in TFLM's interpreter. */
    mb_table_reset_state(blob, ws);
    for (;;) {
        memset(ws, 0xA5, mb_table_workspace_bytes(blob) - mb_table_state_bytes(blob));
        for (uint32_t k = 0; k < n_in; k++) {
            uint32_t offset, bytes;
            mb_table_io(blob, k, &offset, &bytes);
            if (fread(ws + offset, 1, bytes, stdin) != bytes) {
                fflush(stdout);
                free(records);
                free(ws);
                free(blob);
                return 0;
            }
        }
        mb_table_run_prepared(&prepared);
        for (uint32_t k = 0; k < n_out; k++) {
            uint32_t offset, bytes;
            mb_table_io(blob, n_in + k, &offset, &bytes);
            fwrite(ws + offset, 1, bytes, stdout);
        }
    }
}
