"""Firmware benchmark: sizes and timer ticks per inference of the standalone (AOT) firmware, per
emulated board and test model.

For each board it builds every model in tests/models/*.tflite with the board's default toolchain
(`microbuild build`'s code path), reads the section sizes from the ELF (text, rodata, weights,
data, bss, workspace, stack), boots it under QEMU with `-icount shift=0` and records the timer
ticks per inference the firmware printed. Under icount every guest instruction is 1 ns of virtual
time, so `ticks * 1e9 / timer_hz` is the number of instructions executed: comparable across
boards and repeatable run to run. The host row is wall-clock time (ns), for scale only.

Writes benchmarks/results/firmware_boards.json and .md and prints the table.

    .venv/bin/python benchmarks/firmware_boards.py [BOARD ...]
"""

from __future__ import annotations

import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
MODELS = sorted((ROOT / "tests" / "models").glob("*.tflite"))
BOARDS = ["mps2-an385", "mps2-an386", "mps2-an500", "mps3-an547", "netduinoplus2", "riscv32-virt",
          "host"]
SIZE_KEYS = ("text", "rodata", "weights", "data", "bss", "workspace", "stack")


def measure_board(board: str) -> list[dict]:
    from microbuild import api

    rows = []
    with tempfile.TemporaryDirectory(prefix=f"mb-bench-{board}-") as tmp:
        for model in MODELS:
            build = api.build_firmware(board, [model], tmp, name=model.stem, seed=0)
            result = api.run_firmware(build, timeout=600)
            prefix = build.models[0]["prefix"]
            ticks = result.ticks[prefix]
            totals = build.size["totals"]
            row = {"board": board, "toolchain": build.toolchain, "model": model.stem,
                   **{k: totals.get(k, 0) for k in SIZE_KEYS},
                   "ticks": ticks, "timer_hz": result.timer_hz}
            if build.board.is_emulated:
                row["instructions"] = round(ticks * 1e9 / result.timer_hz)
            rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    header = ["board", "model", *SIZE_KEYS, "ticks", "timer Hz", "instructions (icount)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        instr = f"{r['instructions']:,}" if "instructions" in r else "host: wall-clock ns"
        lines.append("| " + " | ".join([r["board"], r["model"], *(f"{r[k]:,}" for k in SIZE_KEYS),
                                         f"{r['ticks']:,}", f"{r['timer_hz']:,}", instr]) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    boards = argv or BOARDS
    with ProcessPoolExecutor(max_workers=2) as pool:
        rows = [row for board_rows in pool.map(measure_board, boards) for row in board_rows]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "firmware_boards.json").write_text(json.dumps(rows, indent=1) + "\n")
    table = markdown(rows)
    (RESULTS / "firmware_boards.md").write_text(
        "# Standalone firmware per board: section bytes and ticks per inference\n\n"
        "Default toolchain per board, `-O2`; QEMU with `-icount shift=0` (instructions = "
        "ticks x 1e9 / timer Hz). rodata includes the input embedded in the firmware (27 KiB "
        "for the 96x96x3 VWW image); weights are the models' .mb_weights.\n\n" + table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
