"""Instructions per function (and per translation block) of a firmware run in QEMU: where a kernel
spends its count, without guessing from the source.

    .venv/bin/python -m microbuild build --board mps3-an547 --model m.tflite -o /tmp/fw
    .venv/bin/python tools/qemu_profile.py /tmp/fw/firmware.elf --machine mps3-an547 \\
        [--function run_direct_plain] [--top 15]

QEMU runs the ELF with `-icount shift=0 -d in_asm,exec,nochain` (semihosting on, as the boards'
exit drivers need). Each translation block's byte range comes from its in_asm listing; its
instruction count from arm-none-eabi-objdump over that range (QEMU's own disassembler splits
Helium instructions into halves, so its line count is wrong for them); the count times the
block's executions is charged to the function holding it. The total matches the firmware's
timer ticks under -icount shift=0 for the code between two reads. An AOT firmware also prints
its self-test outputs, which shows up as console functions: look at the kernel's rows.

The same for TFLM + CMSIS-NN, to see where the anchor firmware of ../shared/anchors/tflm spends
its count on a model (its run.py feeds the model; the trace covers the whole inference run: the
interpreter's set-up and every invocation the firmware makes, so compare kernels' shares, not
totals):

    .venv/bin/python tools/qemu_profile.py --tflm m.tflite --machine mps3-an547 [--top 15]
"""

from __future__ import annotations

import argparse
import bisect
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

_LISTED = re.compile(r"^0x([0-9a-f]+):\s+((?:[0-9a-f]{4}\s?)+)\s")
_EXECUTED = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
_OBJDUMP_LINE = re.compile(r"^\s+([0-9a-f]+):\t[0-9a-f]{4}", re.M)


def read_trace(log: Path) -> tuple[dict[int, tuple[int, int]], collections.Counter]:
    """(block start -> (start, end) bytes of its last translation, block start -> executions)."""
    ranges: dict[int, tuple[int, int]] = {}
    executions: collections.Counter = collections.Counter()
    start = None
    with open(log, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            listed = _LISTED.match(line)
            if listed:
                pc = int(listed.group(1), 16)
                start = pc if start is None else start
                ranges[start] = (start, pc + 2 * len(listed.group(2).split()))
                continue
            start = None
            executed = _EXECUTED.match(line)
            if executed:
                executions[int(executed.group(1), 16)] += 1
    return ranges, executions


def _instruction_addresses(elf: Path) -> list[int]:
    text = subprocess.run(["arm-none-eabi-objdump", "-d", "-marmv8.1-m.main", str(elf)],
                          capture_output=True, text=True, check=True).stdout
    return sorted(int(m.group(1), 16) for m in _OBJDUMP_LINE.finditer(text))


def _functions(elf: Path) -> list[tuple[int, str]]:
    text = subprocess.run(["arm-none-eabi-nm", "-n", str(elf)], capture_output=True, text=True,
                          check=True).stdout
    found = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            found.append((int(parts[0], 16) & ~1, parts[2]))
    return found


def profile(elf: Path, log: Path) -> tuple[collections.Counter, dict[int, tuple[str, int, int]]]:
    """(function -> instructions, block start -> (function, instructions per run, runs))."""
    ranges, executions = read_trace(log)
    addresses = _instruction_addresses(elf)
    functions = _functions(elf)
    starts = [a for a, _ in functions]
    per_function: collections.Counter = collections.Counter()
    blocks = {}
    for pc, runs in executions.items():
        if pc not in ranges:
            continue
        lo, hi = ranges[pc]
        size = bisect.bisect_left(addresses, hi) - bisect.bisect_left(addresses, lo)
        i = bisect.bisect_right(starts, pc) - 1
        name = functions[i][1] if i >= 0 else "?"
        per_function[name] += size * runs
        blocks[pc] = (name, size, runs)
    return per_function, blocks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("elf", type=Path, nargs="?", help="the firmware (an AOT build)")
    parser.add_argument("--tflm", type=Path, metavar="MODEL",
                        help="profile the TFLM + CMSIS-NN anchor firmware running MODEL instead")
    parser.add_argument("--machine", required=True, help="QEMU machine, e.g. mps3-an547")
    parser.add_argument("--function", help="also list this function's translation blocks")
    parser.add_argument("--top", type=int, default=12, help="functions to list (12)")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    if args.tflm is not None:
        return _profile_tflm(args)
    if args.elf is None or not args.elf.is_file():
        print(f"error: {args.elf}: no such firmware", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="qemu-profile-") as folder:
        log = Path(folder) / "trace.log"
        command = ["qemu-system-arm", "-M", args.machine, "-nographic", "-icount", "shift=0",
                   "-semihosting-config", "enable=on,target=native", "-kernel", str(args.elf),
                   "-d", "in_asm,exec,nochain", "-D", str(log)]
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"error: QEMU did not exit within {args.timeout:.0f} s (a firmware that "
                  "waits for a host, e.g. an RPC server? profile an AOT build)", file=sys.stderr)
            return 1
        if not log.is_file():
            print(f"error: QEMU wrote no trace (exit {run.returncode}): {run.stderr.strip()}",
                  file=sys.stderr)
            return 1
        _report(per_function_blocks=profile(args.elf, log), top=args.top, function=args.function)
    return 0


ANCHORS = Path(__file__).resolve().parents[2] / "shared" / "anchors" / "tflm"


def _profile_tflm(args) -> int:
    """--tflm: the anchor's run.py runs the model through a QEMU wrapper that adds the trace."""
    if not (ANCHORS / "run.py").is_file():
        print(f"error: no TFLM anchor firmwares at {ANCHORS} (../shared/anchors/tflm beside the "
              "repository)", file=sys.stderr)
        return 2
    if not args.tflm.is_file():
        print(f"error: {args.tflm}: no such model", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ANCHORS))
    import run as anchor

    with tempfile.TemporaryDirectory(prefix="qemu-profile-") as folder:
        log = Path(folder) / "trace.log"
        qemu = Path(folder) / "qemu"
        # run.py runs QEMU twice (the tensors' description, then the inference); -D truncates,
        # so the trace left is the inference run's: the interpreter's set-up and the firmware's
        # invocations.
        qemu.write_text(f'#!/bin/sh\nexec qemu-system-arm "$@" -d in_asm,exec,nochain '
                        f'-D "{log}"\n')
        qemu.chmod(0o755)
        try:
            result = anchor.run(str(args.tflm), args.machine, "cmsis_nn", qemu=str(qemu),
                                timeout=args.timeout)
        except Exception as error:  # run.py raises RuntimeError / ValueError with its reason
            print(f"error: TFLM anchor on {args.machine}: {error}", file=sys.stderr)
            return 1
        elf = Path(anchor.elf_path(args.machine, "cmsis_nn"))
        print(f"TFLM + CMSIS-NN on {args.machine}: {result['instructions']:,} instructions per "
              "inference (run.py); the trace below covers the whole run")
        _report(profile(elf, log), args.top, args.function)
    return 0


def _report(per_function_blocks, top: int, function: str | None) -> None:
    per_function, blocks = per_function_blocks
    total = sum(per_function.values())
    print(f"{total:,} instructions traced")
    for name, count in per_function.most_common(top):
        print(f"{count:12,} {100 * count / max(total, 1):5.1f}%  {name}")
    if function:
        print(f"translation blocks of {function} (start: instructions x runs):")
        for pc, (name, size, runs) in sorted(blocks.items()):
            if name == function:
                print(f"{size * runs:12,}  {pc:#07x}: {size} x {runs}")


if __name__ == "__main__":
    sys.exit(main())
