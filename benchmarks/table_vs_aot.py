"""The table executor against the AOT executor, in instructions, on mps2-an500 in QEMU (issue 31).

One firmware links each model's AOT code *and* the table runner with the kernel set those
models call (built as an `app` firmware: the harness main is generated here). The models'
blobs, packed for that firmware with the board's compiler, are loaded into the board's PSRAM by
QEMU's `-device loader` (the firmware holds no model data for them). For each model the firmware
fills the inputs with the same bytes, runs the AOT code and the blob, compares the outputs
(bit-exact between the executors, on the device) and prints the timer ticks of each; under
`-icount shift=0` ticks x 1e9 / timer Hz are instructions.

Both executors run with row streaming off (a row-streamed region is not carried by blobs yet),
so the comparison is of the same kernels with the same plan: what the table costs is its
per-op dispatch (argument decoding, copying parameter structs with pointer fields).

Writes benchmarks/results/table_vs_aot.json and .md and prints the table.

    nice -n 19 .venv/bin/python benchmarks/table_vs_aot.py [MODEL ...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "models"
DEFAULT_MODELS = [ROOT / "tests" / "models" / "ds_cnn.tflite", SHARED / "person_detect.tflite",
                  SHARED / "micro_speech_quantized.tflite", SHARED / "hello_world_int8.tflite",
                  ROOT / "tests" / "models" / "resnet8.tflite"]
BOARD = "mps2-an500"
BLOB_ADDRESS = 0x60000000  # the board's PSRAM, which the firmware does not use


def _main_c(models: list[tuple[str, int, int, int, int]], workspace: int, outputs: int) -> str:
    """The harness: per (prefix, blob offset, blob bytes, inputs, outputs), run AOT then the
    blob on the same input and print
    `mb-bench <prefix> <status> <aot ticks> <table ticks> <outputs equal>`."""
    lines = ["#include <stdint.h>", "#include <string.h>", '#include "microbuild/platform.h"',
             '#include "microbuild/table.h"']
    lines += [f'#include "{m[0]}.h"' for m in models]
    lines += [f"static uint8_t ws[{workspace}] __attribute__((aligned(16)));",
              f"static uint8_t aot_out[{max(outputs, 1)}];",
              "static void fill_inputs(const uint8_t *blob)", "{",
              "    for (uint32_t k = 0; k < mb_table_input_count(blob); k++) {",
              "        uint32_t at, n;", "        mb_table_io(blob, k, &at, &n);",
              "        for (uint32_t i = 0; i < n; i++) ws[at + i] = (uint8_t)(i * 37u + k + 5u);",
              "    }", "}",
              "static uint32_t outputs(const uint8_t *blob, uint8_t *to, int compare)", "{",
              "    uint32_t pos = 0, same = 1;",
              "    for (uint32_t k = 0; k < mb_table_output_count(blob); k++) {",
              "        uint32_t at, n;",
              "        mb_table_io(blob, mb_table_input_count(blob) + k, &at, &n);",
              "        if (compare) same &= memcmp(to + pos, ws + at, n) == 0;",
              "        else memcpy(to + pos, ws + at, n);",
              "        pos += n;", "    }", "    return same;", "}",
              "static void line(const char *name, int status, uint64_t aot, uint64_t table, "
              "uint32_t same)", "{",
              '    mb_print("mb-bench "); mb_print(name); mb_print(" "); mb_print_i32(status);',
              '    mb_print(" "); mb_print_u64(aot); mb_print(" "); mb_print_u64(table);',
              '    mb_print(" "); mb_print_u64(same); mb_print("\\n");', "}",
              "int main(void)", "{", "    int failures = 0;"]
    for prefix, offset, size, n_in, n_out in models:
        upper = prefix.upper()
        slots = ([f"{prefix}_input{k}(ws)" for k in range(n_in)]
                 + [f"{prefix}_output{k}(ws)" for k in range(n_out)])
        lines += [
            "    {",
            f"        const uint8_t *blob = (const uint8_t *)0x{BLOB_ADDRESS + offset:08x}u;",
            "        int32_t bad_op;",
            f"        int status = (int)mb_table_check(blob, {size}u, sizeof ws, &bad_op);",
            "        uint64_t aot = 0, table = 0; uint32_t same = 0;",
            "        if (status == 0) {",
            "            fill_inputs(blob);",
            "            uint64_t t0 = mb_timer_now();",
            f"            {prefix}_run({', '.join(slots + ['ws'])});",
            "            aot = mb_timer_now() - t0;",
            "            outputs(blob, aot_out, 0);",
            f"            memset(ws, 0xA5, {upper}_WORKSPACE_SIZE);",
            "            fill_inputs(blob);",
            "            t0 = mb_timer_now();",
            "            mb_table_run(blob, ws);",
            "            table = mb_timer_now() - t0;",
            "            same = outputs(blob, aot_out, 1);",
            "        }",
            "        failures += status != 0 || !same;",
            f'        line("{prefix}", status, aot, table, same);',
            "    }"]
    lines += ["    return failures;", "}", ""]
    return "\n".join(lines)


def main() -> int:
    from microbuild import api
    from microbuild.blob import KernelSet, pack_model
    from microbuild.blob.format import BlobError
    from microbuild.boards import resolve_board
    from microbuild.device.runners.qemu import QemuRunner
    from microbuild.device.timing import duration
    from microbuild.firmware.table import compile_for_table
    from microbuild.firmware.toolchains import toolchain_setup

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path, default=DEFAULT_MODELS)
    args = parser.parse_args()
    board = resolve_board(BOARD)
    setup = toolchain_setup(board)
    rows, packable = [], []
    for path in args.models:
        if not path.exists():
            rows.append({"model": path.name, "note": "not here"})
            continue
        compiled = compile_for_table(board, path)
        try:
            KernelSet.for_models([compiled])
        except BlobError as err:
            rows.append({"model": path.name, "note": str(err).splitlines()[1].strip(" -")})
            continue
        packable.append((path, compiled))
    kernels = KernelSet.for_models([c for _, c in packable])
    with tempfile.TemporaryDirectory(prefix="mb-table-bench-") as tmp:
        tmp = Path(tmp)
        blobs, placed = bytearray(), []
        for path, compiled in packable:
            blob = pack_model(compiled, kernels, board.name, cc=[setup.cc, *setup.cflags])
            placed.append((compiled.prefix, len(blobs), len(blob), len(compiled.inputs),
                           len(compiled.outputs)))
            blobs += blob + bytes(-len(blob) % 16)
        (tmp / "blobs.bin").write_bytes(blobs)
        (tmp / "mb_table_kernels.c").write_text(kernels.c_source())
        workspace = max(c.workspace_bytes for _, c in packable)
        outputs = max(sum(s.bytes for s in c.outputs) for _, c in packable)
        (tmp / "bench_main.c").write_text(_main_c(placed, workspace, outputs))
        build = api.build_firmware(
            board, [str(p) for p, _ in packable], tmp / "fw", executor="app", row_stream=False,
            sources=[tmp / "bench_main.c", ROOT / "runtime" / "table" / "mb_table.c",
                     tmp / "mb_table_kernels.c"])
        command = QemuRunner(board).command(build.elf) + [
            "-device", f"loader,file={tmp / 'blobs.bin'},addr=0x{BLOB_ADDRESS:08x}"]
        # subprocess.run kills QEMU if it outlives the timeout.
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    timer_hz = int(board.data["timer"]["frequency_hz"])
    for prefix, status, aot, table, same in re.findall(
            r"mb-bench (\w+) (-?\d+) (\d+) (\d+) (\d+)", result.stdout):
        aot_i = duration(int(aot), timer_hz, board).instructions
        table_i = duration(int(table), timer_hz, board).instructions
        rows.append({"model": prefix, "status": int(status), "aot_instructions": int(aot_i),
                     "table_instructions": int(table_i),
                     "table_over_aot": round(table_i / aot_i, 4) if aot_i else None,
                     "outputs_equal": same == "1"})
    if not any("aot_instructions" in r for r in rows):
        print(result.stdout, result.stderr, file=sys.stderr)
        return 1
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    document = {"board": BOARD, "kernel_set": kernels.describe(), "rows": rows,
                "command": "nice -n 19 .venv/bin/python benchmarks/table_vs_aot.py"}
    (results / "table_vs_aot.json").write_text(json.dumps(document, indent=2) + "\n")
    table_lines = [f"Table executor vs AOT on {BOARD} (QEMU -icount shift=0, row streaming off "
                   "in both; one firmware, blobs loaded with -device loader)", "",
                   "| model | AOT instructions | table instructions | table / AOT | outputs equal "
                   "| note |", "|---|---|---|---|---|---|"]
    for r in rows:
        if "aot_instructions" in r:
            table_lines.append(f"| {r['model']} | {r['aot_instructions']:,} | "
                               f"{r['table_instructions']:,} | {r['table_over_aot']:.4f} | "
                               f"{'yes' if r['outputs_equal'] else 'NO'} | "
                               f"{'' if r['status'] == 0 else 'refused ' + str(r['status'])} |")
        else:
            table_lines.append(f"| {r['model']} | | | | | {r['note']} |")
    text = "\n".join(table_lines) + "\n"
    (results / "table_vs_aot.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
