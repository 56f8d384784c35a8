"""The table executor against the AOT executor and TFLM, on mps2-an500 (M7) and mps3-an547 (M55)
in QEMU and on the host (issue 31).

On each board one firmware links each model's AOT code *and* the table runner with the kernel set
those models call (built as an `app` firmware: the harness main is generated here). The models'
blobs and their inputs (seeded: integers over their whole range, floats standard normal), packed
for that firmware with the board's compiler, are loaded into the board's PSRAM by QEMU's
`-device loader` (the firmware holds no model data for them). For each model the firmware runs
the AOT code and the blob on the same inputs, each from the model's reset state, compares the
outputs (bit-exact between the executors, on the device), prints the timer ticks of each (under
`-icount shift=0` ticks x 1e9 / timer Hz are instructions) and the table's outputs, which are
compared with TFLM's on the same inputs: the board's prebuilt TFLM firmware
(../shared/anchors/tflm, CMSIS-NN kernels) where it runs the model, else TFLM's interpreter on
the host (float and signal-library models: the anchor firmware has neither).

On the host the same blobs, packed for the host's kernel variants, run through the host table
runner (runtime/table/host_main.c) and are compared with TFLM's interpreter.

Both executors row-stream as they do by default (resnet8's and person_detect's first
convolutions: the blob carries the region's band calls and row moves as its op table, so it needs
the AOT code's workspace), so the comparison is of the same kernels with the same plan. The table's ops are resolved once
when the blob is loaded (mb_table_prepare, not timed: it is done once per model load, as the
AOT code's addresses are resolved at link time), so what the table costs per run is its per-op
dispatch: an indirect call through the op's record and the thunk's loads of its arguments.

Writes benchmarks/results/table_vs_aot.json and .md and prints the table.

    nice -n 19 .venv/bin/python benchmarks/table_vs_aot.py [--board mps3-an547] [MODEL ...]

Results per board: benchmarks/results/table_vs_aot.{json,md} for mps2-an500,
table_vs_aot_<board>.{json,md} for another board.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "models"
DEFAULT_MODELS = [ROOT / "tests" / "models" / "ds_cnn.tflite",
                  ROOT / "tests" / "models" / "resnet8.tflite", *sorted(SHARED.glob("*.tflite"))]
BOARDS = ("mps2-an500", "mps3-an547")
# All the models' AOT weights (mobilenet_v2's alone are 4.9 MiB) do not fit either board's
# on-chip memory: the bench board places them in the first half of the external RAM at
# 0x60000000 (mps2-an500's PSRAM, mps3-an547's DDR), declared read-only so that QEMU loads them
# there from the ELF instead of a load image copied at reset (QEMU counts instructions, not
# memory wait states, so where they live does not change the figures). The blobs and inputs go
# into its second half, which the firmware does not use.
# mps3-an547's 512 KiB DTCM does not hold the largest workspace either (mobilenet_v2's 1.2 MiB,
# not row-streamed): there the zero-initialised data (the workspace) goes to the 4 MiB of
# internal SRAM at 0x21000000, which the board's YAML leaves out.
BENCH_REGION = {"mps2-an500": "psram", "mps3-an547": "ddr"}
BENCH_EXTRA = {
    "mps2-an500": ("", ""),
    "mps3-an547": ('    isram: {origin: 0x21000000, length: 4M, access: rwx, '
                   'description: "internal SRAM"}\n', "    bss: isram\n")}


def _bench_board(board: str) -> str:
    region = BENCH_REGION[board]
    extra_region, extra_placement = BENCH_EXTRA[board]
    return f"""name: {board}-table-bench
extends: {board}
title: {board} with the model weights in external RAM (benchmarks/table_vs_aot.py)
memory:
  regions:
    {region}: {{origin: 0x60000000, length: 16M, access: rx, description: "external RAM, read-only here"}}
{extra_region}  placement:
    weights: {region}
{extra_placement}    model_slots: []
"""


BLOB_ADDRESS = 0x60800000
INPUT_SEED = 31


def _main_c(models: list[dict], workspace: int, outputs: int, records: int) -> str:
    """The harness: per model (prefix, blob and inputs offsets in external RAM, blob bytes, input
    and output counts, state bytes), run AOT then the prepared blob on the same inputs and print
    `mb-bench <prefix> <status> <aot ticks> <table ticks> <outputs equal> <AOT workspace>
    <blob workspace>` (bytes, state excluded) and
    `mb-out <prefix> <the table's outputs in hex>`."""
    lines = ["#include <stdint.h>", "#include <string.h>", '#include "microbuild/platform.h"',
             '#include "microbuild/table.h"']
    lines += [f'#include "{m["prefix"]}.h"' for m in models]
    lines += [f"static uint8_t ws[{workspace}] __attribute__((aligned(16)));",
              f"static uint64_t records[{max(records, 8) // 8}];",
              f"static uint8_t aot_out[{max(outputs, 1)}];",
              "static void fill_inputs(const uint8_t *blob, const uint8_t *inputs)", "{",
              "    for (uint32_t k = 0; k < mb_table_input_count(blob); k++) {",
              "        uint32_t at, n;", "        mb_table_io(blob, k, &at, &n);",
              "        memcpy(ws + at, inputs, n);", "        inputs += (n + 15u) & ~15u;",
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
              "uint32_t same, uint32_t out_bytes, uint32_t aot_ws, uint32_t table_ws)", "{",
              '    mb_print("mb-bench "); mb_print(name); mb_print(" "); mb_print_i32(status);',
              '    mb_print(" "); mb_print_u64(aot); mb_print(" "); mb_print_u64(table);',
              '    mb_print(" "); mb_print_u64(same); mb_print(" "); mb_print_u64(aot_ws);',
              '    mb_print(" "); mb_print_u64(table_ws); mb_print("\\n");',
              '    mb_print("mb-out "); mb_print(name); mb_print(" ");',
              "    mb_print_hex(aot_out, out_bytes);", '    mb_print("\\n");', "}",
              "int main(void)", "{", "    int failures = 0;"]
    for m in models:
        prefix, upper = m["prefix"], m["prefix"].upper()
        slots = ([f"{prefix}_input{k}(ws)" for k in range(m["inputs"])]
                 + [f"{prefix}_output{k}(ws)" for k in range(m["outputs"])] + ["ws"])
        state = []
        if m["state_bytes"]:
            lines.append(f"    static uint8_t {prefix}_state[{upper}_STATE_SIZE] "
                         "__attribute__((aligned(16)));")
            slots.append(f"{prefix}_state")
            state = [f"            {prefix}_reset({prefix}_state);"]
        lines += [
            "    {",
            f"        const uint8_t *blob = (const uint8_t *)0x{BLOB_ADDRESS + m['blob_at']:08x}u;",
            f"        const uint8_t *in = (const uint8_t *)0x{BLOB_ADDRESS + m['inputs_at']:08x}u;",
            "        int32_t bad_op;",
            f"        int status = (int)mb_table_check(blob, {m['blob_bytes']}u, sizeof ws, &bad_op);",
            "        uint64_t aot = 0, table = 0; uint32_t same = 0;",
            "        if (status == 0) {",
            *state,
            "            fill_inputs(blob, in);",
            "            uint64_t t0 = mb_timer_now();",
            f"            {prefix}_run({', '.join(slots)});",
            "            aot = mb_timer_now() - t0;",
            "            outputs(blob, aot_out, 0);",
            f"            memset(ws, 0xA5, {upper}_WORKSPACE_SIZE);",
            "            mb_table_reset_state(blob, ws);",
            "            fill_inputs(blob, in);",
            "            mb_table_prepared prepared;",
            "            if (mb_table_prepare(blob, ws, records, sizeof records, &prepared) != 0) "
            "status = 100;",
            "            t0 = mb_timer_now();",
            "            if (status == 0) mb_table_run_prepared(&prepared);",
            "            table = mb_timer_now() - t0;",
            "            same = outputs(blob, aot_out, 1);",
            "            outputs(blob, aot_out, 0);  /* the table's, for mb-out */",
            "        }",
            "        failures += status != 0 || !same;",
            f'        line("{prefix}", status, aot, table, same, {m["output_bytes"]}u, '
            f'{upper}_WORKSPACE_SIZE, mb_table_workspace_bytes(blob) - '
            'mb_table_state_bytes(blob));',
            "    }"]
    lines += ["    return failures;", "}", ""]
    return "\n".join(lines)


def _inputs(compiled, seed: int = INPUT_SEED) -> list[np.ndarray]:
    from microbuild.tensor_files import random_inputs

    return random_inputs(compiled.inputs, seed)


def _same(got: bytes, want: list[np.ndarray]) -> bool:
    return got == b"".join(np.ascontiguousarray(w).tobytes() for w in want)


def _tflm(path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    from microbuild.tflm_reference import tflm_outputs

    return tflm_outputs(path, inputs)


def _host_rows(paths: list[Path]) -> dict[str, dict]:
    """Each model's blob for the host's kernels through the host table runner, against TFLM."""
    from microbuild.blob import KernelSet, pack_model
    from microbuild.blob.host import build_host_runner
    from microbuild.blob.pack import blob_workspace_bytes
    from microbuild.boards import resolve_board
    from microbuild.firmware.table import compile_for_table

    host = resolve_board("host")
    compiled = [compile_for_table(host, p) for p in paths]
    kernels = KernelSet.for_models(compiled)
    workspace = max(blob_workspace_bytes(c) for c in compiled)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="mb-table-host-") as tmp:
        runner = build_host_runner(kernels, Path(tmp), cflags=(
            "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
            f"-DMB_TABLE_WORKSPACE_BYTES={workspace}u"))
        for path, c in zip(paths, compiled):
            (Path(tmp) / "m.mbm").write_bytes(pack_model(c, kernels, "host"))
            inputs = _inputs(c)
            result = subprocess.run([str(runner.program), str(Path(tmp) / "m.mbm")],
                                    input=b"".join(x.tobytes() for x in inputs),
                                    capture_output=True, timeout=600)
            rows[c.prefix] = {"host_exit": result.returncode,
                              "host_equals_tflm": result.returncode == 0
                              and _same(result.stdout, _tflm(path, inputs))}
    return rows


def _records_bytes(blob: bytes) -> int:
    """An upper bound of mb_table_prepared_bytes for a blob: a record (two pointers) per op, a
    pointer per argument, and at most the whole parameter section copied."""
    from microbuild.blob import read_blob

    b = read_blob(blob)
    pointers = 2 * len(b.ops) + sum(len(op.args) for op in b.ops)
    return pointers * b.pointer_bytes + len(b.params) + 8


def _tflm_on_device(board: str, path: Path, inputs: list[np.ndarray], got: bytes) -> str:
    """Whether the table's outputs on the device equal TFLM's: the board's TFLM firmware
    where it runs the model, else TFLM's interpreter on the host."""
    sys.path.insert(0, str(HERE))
    from tflm_anchor import ANCHORS

    sys.path.insert(0, str(ANCHORS))
    import run as anchor_run

    try:
        want = anchor_run.run(str(path), board, "cmsis_nn", inputs=inputs)["outputs"]
    except Exception:  # the anchor firmware lacks the model's ops or types: the interpreter
        return "yes (interpreter)" if _same(got, _tflm(path, inputs)) else "NO (interpreter)"
    return "yes (anchor)" if _same(got, want) else "NO (anchor)"


def main() -> int:
    from microbuild import api
    from microbuild.blob import KernelSet, pack_model
    from microbuild.blob.format import BlobError
    from microbuild.blob.pack import blob_workspace_bytes
    from microbuild.boards import resolve_board
    from microbuild.boards.loader import ENV_PATH
    from microbuild.device.runners.qemu import QemuRunner
    from microbuild.device.timing import duration
    from microbuild.firmware.table import compile_for_table
    from microbuild.firmware.toolchains import toolchain_setup

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", choices=BOARDS, default=BOARDS[0])
    parser.add_argument("models", nargs="*", type=Path, default=DEFAULT_MODELS)
    args = parser.parse_args()
    board_name = args.board
    boards = Path(tempfile.mkdtemp(prefix="mb-table-bench-boards-"))
    (boards / f"{board_name}-table-bench.yaml").write_text(_bench_board(board_name))
    os.environ[ENV_PATH] = str(boards)
    board = resolve_board(f"{board_name}-table-bench")
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
    inputs = {c.prefix: _inputs(c) for _, c in packable}
    with tempfile.TemporaryDirectory(prefix="mb-table-bench-") as tmp:
        tmp = Path(tmp)
        data, placed, records = bytearray(), [], 0
        for path, compiled in packable:
            blob = pack_model(compiled, kernels, board.name, cc=[setup.cc, *setup.cflags])
            records = max(records, _records_bytes(blob))
            blob_at = len(data)
            data += blob + bytes(-len(blob) % 16)
            inputs_at = len(data)
            for x in inputs[compiled.prefix]:
                data += x.tobytes() + bytes(-x.nbytes % 16)
            placed.append({"prefix": compiled.prefix, "blob_at": blob_at, "blob_bytes": len(blob),
                           "inputs_at": inputs_at, "inputs": len(compiled.inputs),
                           "outputs": len(compiled.outputs),
                           "output_bytes": sum(s.bytes for s in compiled.outputs),
                           "state_bytes": compiled.state_bytes})
        (tmp / "blobs.bin").write_bytes(data)
        (tmp / "mb_table_kernels.c").write_text(kernels.c_source())
        workspace = max(blob_workspace_bytes(c) for _, c in packable)
        outputs = max(m["output_bytes"] for m in placed)
        (tmp / "bench_main.c").write_text(_main_c(placed, workspace, outputs, records))
        build = api.build_firmware(
            board, [str(p) for p, _ in packable], tmp / "fw", executor="app",
            sources=[tmp / "bench_main.c", ROOT / "runtime" / "table" / "mb_table.c",
                     tmp / "mb_table_kernels.c"])
        command = QemuRunner(board).command(build.elf) + [
            "-device", f"loader,file={tmp / 'blobs.bin'},addr=0x{BLOB_ADDRESS:08x}"]
        # subprocess.run kills QEMU if it outlives the timeout.
        result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    timer_hz = int(board.data["timer"]["frequency_hz"])
    device_out = dict(re.findall(r"mb-out (\w+) ([0-9a-f]*)", result.stdout))
    path_of = {c.prefix: p for p, c in packable}
    host = _host_rows([p for p, _ in packable])
    for prefix, status, aot, table, same, aot_ws, table_ws in re.findall(
            r"mb-bench (\w+) (-?\d+) (\d+) (\d+) (\d+) (\d+) (\d+)", result.stdout):
        aot_i = duration(int(aot), timer_hz, board).instructions
        table_i = duration(int(table), timer_hz, board).instructions
        got = bytes.fromhex(device_out.get(prefix, ""))
        rows.append({"model": prefix, "status": int(status), "aot_instructions": int(aot_i),
                     "table_instructions": int(table_i),
                     "table_over_aot": round(table_i / aot_i, 4) if aot_i else None,
                     "outputs_equal": same == "1", "aot_workspace": int(aot_ws),
                     "table_workspace": int(table_ws),
                     "device_equals_tflm": _tflm_on_device(board_name, path_of[prefix], inputs[prefix],
                                                           got),
                     **host.get(prefix, {})})
    if not any("aot_instructions" in r for r in rows):
        print(result.stdout, result.stderr, file=sys.stderr)
        return 1
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    stem = "table_vs_aot" if board_name == BOARDS[0] else f"table_vs_aot_{board_name}"
    command = "nice -n 19 .venv/bin/python benchmarks/table_vs_aot.py" + (
        "" if board_name == BOARDS[0] else f" --board {board_name}")
    document = {"board": board_name, "kernel_set": kernels.describe(), "rows": rows,
                "command": command}
    (results / f"{stem}.json").write_text(json.dumps(document, indent=2) + "\n")
    table_lines = [f"Table executor vs AOT on {board_name} (QEMU -icount shift=0, row streaming "
                   "at its defaults in both; one firmware, blobs and inputs loaded with -device "
                   "loader; each blob's ops resolved once when loaded, mb_table_prepare) and "
                   "bit-exactness with TFLM on the device and on the host. Workspaces in bytes, "
                   "state excluded.", "",
                   "| model | AOT instructions | table instructions | table / AOT | AOT workspace "
                   "| table workspace | table = AOT "
                   f"on {board_name} | = TFLM on {board_name} | = TFLM on host | note |",
                   "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "aot_instructions" in r:
            table_lines.append(
                f"| {r['model']} | {r['aot_instructions']:,} | {r['table_instructions']:,} | "
                f"{r['table_over_aot']:.4f} | {r['aot_workspace']:,} | "
                f"{r['table_workspace']:,} | {'yes' if r['outputs_equal'] else 'NO'} | "
                f"{r['device_equals_tflm']} | "
                f"{'yes' if r.get('host_equals_tflm') else 'NO'} | "
                f"{'' if r['status'] == 0 else 'refused ' + str(r['status'])} |")
        else:
            table_lines.append(f"| {r['model']} | | | | | | | | | {r['note']} |")
    text = "\n".join(table_lines) + "\n"
    (results / f"{stem}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
