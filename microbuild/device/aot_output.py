"""Reading what a standalone (AOT) firmware prints, and telling apart the ways it can go wrong.

The line protocol is documented in runtime/include/microbuild/aot.h.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from microbuild.boards import Board
from microbuild.errors import DeviceError

_ARM_EXCEPTIONS = {2: "NMI", 3: "HardFault", 4: "MemManage fault", 5: "BusFault",
                   6: "UsageFault", 7: "SecureFault", 11: "SVCall", 12: "DebugMonitor",
                   14: "PendSV", 15: "SysTick"}
_RISCV_CAUSES = {0: "instruction address misaligned", 1: "instruction access fault",
                 2: "illegal instruction", 3: "breakpoint", 4: "load address misaligned",
                 5: "load access fault", 6: "store address misaligned", 7: "store access fault",
                 11: "environment call"}


@dataclass
class AotResult:
    """Outputs and timing of every model in a standalone firmware run."""

    board: str
    timer_hz: int
    outputs: dict[str, list[np.ndarray]] = field(default_factory=dict)
    ticks: dict[str, int] = field(default_factory=dict)
    status: dict[str, int] = field(default_factory=dict)
    console: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "board": self.board, "timer_hz": self.timer_hz,
            "models": {
                name: {"ticks_per_inference": self.ticks.get(name),
                       "seconds_per_inference": (self.ticks[name] / self.timer_hz
                                                 if name in self.ticks else None),
                       "status": self.status.get(name),
                       "outputs": [{"dtype": str(a.dtype), "shape": list(a.shape),
                                    "values": a.reshape(-1).tolist()} for a in arrays]}
                for name, arrays in self.outputs.items()},
        }


def describe_exit(board: Board, status: int) -> str | None:
    """Why a firmware exited with ``status``, if the status is a fault code of the start-up code
    (128 + exception number on Cortex-M, 128 + mcause on RISC-V)."""
    if status < 128 or board.is_host:
        return None
    code = status - 128
    if board.arch.startswith("armv"):
        name = _ARM_EXCEPTIONS.get(code, f"interrupt {code - 16}" if code >= 16 else None)
        return f"the firmware took an unhandled exception: {name or code} (exception {code})"
    name = _RISCV_CAUSES.get(code, f"cause {code}")
    return f"the firmware trapped: {name} (mcause {code})"


def parse_aot_output(console: str, models: Sequence[dict[str, Any]], board: Board,
                     exit_status: int) -> AotResult:
    """Turn the console text into arrays (dtype and shape from the compiler's summaries)."""
    specs = {m["prefix"]: m["outputs"] for m in models}
    result = AotResult(board=board.name, timer_hz=0, console=console)
    began = ended = False
    for line in console.splitlines():
        parts = line.strip().split()
        if len(parts) < 2 or parts[0] != "mb-aot":
            continue
        kind, args = parts[1], parts[2:]
        if kind == "begin" and len(args) >= 2:
            began, result.timer_hz = True, int(args[1])
        elif kind == "output" and len(args) >= 3:
            name, index, nbytes = args[0], int(args[1]), int(args[2])
            spec = specs[name][index]
            data = bytes.fromhex(args[3]) if len(args) > 3 else b""
            if len(data) != nbytes or nbytes != spec["bytes"]:
                raise DeviceError(f"{board.name}: output {index} of '{name}' arrived with "
                                  f"{len(data)} of {spec['bytes']} bytes; console:\n{console}")
            array = np.frombuffer(data, dtype=np.dtype(spec["dtype"])).reshape(spec["shape"])
            result.outputs.setdefault(name, []).append(array.copy())
        elif kind == "ticks" and len(args) == 2:
            result.ticks[args[0]] = int(args[1])
        elif kind == "status" and len(args) == 2:
            result.status[args[0]] = int(args[1])
        elif kind == "end":
            ended = True
    fault = describe_exit(board, exit_status)
    if fault or not began or not ended:
        why = fault or ("it printed nothing microbuild recognises" if not began
                        else "it stopped before finishing")
        raise DeviceError(f"{board.name}: {why} (exit status {exit_status}); console output:\n"
                          f"{console[-3000:] or '(nothing)'}")
    for name, status in result.status.items():
        if status != 0:
            raise DeviceError(f"{board.name}: model '{name}' returned {status} (expected 0)")
    missing = [m["prefix"] for m in models
               if len(result.outputs.get(m["prefix"], [])) != len(m["outputs"])]
    if missing or exit_status != 0:
        raise DeviceError(f"{board.name}: incomplete results for {', '.join(missing) or 'a model'} "
                          f"(exit status {exit_status}); console output:\n{console[-3000:]}")
    return result
