"""The tuner's work on the device, over RPC: run each model's reference copy op by op to record
what a measured op reads and writes, check each candidate against it, and time the candidates."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from microbuild.device.rpc.protocol import TimedEntry
from microbuild.errors import MicrobuildError
from microbuild.tensor_files import random_inputs
from microbuild.tuning.results import Candidate, Measured

if TYPE_CHECKING:
    from microbuild.tuning.tuner import TuningPlan


def copy_prefix(stem: str, k: int) -> str:
    return f"{stem}_k{k}"


def activation_slots(summary: dict[str, Any], op: dict[str, Any], kind: str
                      ) -> list[tuple[int, int, int]]:
    """(tensor, workspace offset, bytes) of the op's ``kind`` ("inputs" or "outputs") that the
    plan keeps in the workspace (constants live in flash and need no copying)."""
    out = []
    for t in op[kind]:
        if t < 0:
            continue
        for buffer in summary["plan"]["buffers"]:
            if t in buffer["tensors"]:
                out.append((t, buffer["offset"], int(op["tensor_bytes"][str(t)])))
                break
    return out


def reference_tensors(dev, plan: TuningPlan, stems: dict[str, str], seed: int
                       ) -> dict[str, tuple[list[bytes], list[bytes]]]:
    """Run each model's reference copy op by op on a seeded input; for each measured op, the
    bytes of its workspace inputs just before it and of its outputs just after."""
    wanted: dict[str, dict[int, str]] = {}
    for m in plan.measured:
        wanted.setdefault(m.model, {})[m.position] = m.signature
    found = {}
    for path, positions in wanted.items():
        prefix = copy_prefix(stems[path], 0)
        model = dev._model(prefix)
        dev.write_inputs(prefix, random_inputs(dev.specs(prefix), seed))
        for position in range(max(positions) + 1):
            op = model.summary["ops"][position]
            if position in positions:
                ins = [dev.client.read(model.workspace_offset + offset, size)
                       for _, offset, size in activation_slots(model.summary, op, "inputs")]
            status = dev.client.call(model.ops[position].index)
            if status != 0:
                raise MicrobuildError(f"the reference kernel of op {position} {op['opcode']} in "
                                      f"{Path(path).name} returned {status} on the device")
            if position in positions:
                outs = [dev.client.read(model.workspace_offset + offset, size)
                        for _, offset, size in activation_slots(model.summary, op, "outputs")]
                found[positions[position]] = (ins, outs)
    return found


# How close a candidate that reorders float sums must come to the reference kernel's outputs:
# each value within this fraction of the largest magnitude among the op's reference outputs
# (a reordered sum of n products moves by a few ULPs of the terms, not of the result, so a
# value near zero after cancellation may move by more than its own size).
FLOAT_REORDER_TOLERANCE = 1e-4


def floats_close(got: np.ndarray, want: np.ndarray) -> bool:
    """float32 outputs equal up to FLOAT_REORDER_TOLERANCE of their largest magnitude, with
    NaNs and infinities in the same places."""
    a, b = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    finite = np.isfinite(b)
    if not np.array_equal(finite, np.isfinite(a)) or \
            not np.array_equal(a[~finite], b[~finite], equal_nan=True):
        return False
    scale = float(np.abs(b[finite]).max()) if finite.any() else 0.0
    return bool(np.all(np.abs(a[finite] - b[finite]) <= FLOAT_REORDER_TOLERANCE * scale))


def check_candidate(dev, prefix: str, position: int, ref_in: list[bytes], ref_out: list[bytes],
           candidate: Candidate, reorders_float_sums: bool = False) -> None:
    """Run ``candidate``'s op on the reference's inputs: its outputs must be the reference's
    bytes, or, for a variant that reorders float sums, floats_close to them."""
    model = dev._model(prefix)
    op = model.summary["ops"][position]
    for (_, offset, _size), data in zip(activation_slots(model.summary, op, "inputs"), ref_in):
        dev.client.write(model.workspace_offset + offset, data)
    status = dev.client.call(model.ops[position].index)
    if status != 0:
        candidate.correct, candidate.problem = False, f"returned {status}"
        return
    for k, ((_, offset, size), want) in enumerate(
            zip(activation_slots(model.summary, op, "outputs"), ref_out)):
        got = dev.client.read(model.workspace_offset + offset, size)
        if got != want and reorders_float_sums and floats_close(
                np.frombuffer(got, np.float32), np.frombuffer(want, np.float32)):
            continue  # not the same bits, by design: close enough for --allow-float-reorder
        if got != want:
            a, b = np.frombuffer(got, np.uint8), np.frombuffer(want, np.uint8)
            first = int(np.argmax(a != b))
            candidate.correct = False
            candidate.problem = (f"output {k} differs from the reference in "
                                 f"{int(np.count_nonzero(a != b))} of {len(a)} bytes (first at "
                                 f"byte {first})")
            return
    candidate.correct = True


def time_candidates(dev, stem: str, measured: Measured, ks: list[int], warmup: int, repeat: int) -> None:
    """Times candidates ``ks`` of ``measured`` in one batched TIMED_CALL."""
    entries = []
    for k in ks:
        model = dev._model(copy_prefix(stem, k))
        entries.append(TimedEntry(model.ops[measured.position].index, warmup=warmup,
                                  repeat=repeat))
    dev.client.timed_call(entries)  # split into as few round trips as the max packet allows
    for candidate, entry in zip([measured.candidates[k] for k in ks], entries):
        if entry.status != 0:
            candidate.correct, candidate.problem = False, f"returned {entry.status} when timed"
        else:
            candidate.ticks = entry.median
