"""`microbuild tune`: measure every legal kernel variant of a model's operators on the board.

1. **Plan.** Each op whose lowering has variants the board's CPU can run is grouped by its op
   signature (shapes and loop-shaping options); one op per signature is measured, and the result
   serves every op and model with that signature.
2. **One firmware.** Candidate slot k of every signature is built into copy k of the model
   (copy 0 is the reference everywhere), so all candidates live in a single RPC firmware: one
   build, one flash.
3. **Correct?** The reference copy runs operator by operator on a seeded input; before each
   measured op its input tensors are read back, after it its outputs. Each candidate then gets
   exactly those inputs and must produce exactly those outputs.
4. **Fast?** Every candidate of a signature is timed in one TIMED_CALL round trip (warm-up runs,
   then ``repeat`` timed runs; the median counts), so tuning time is spent on the device rather
   than on the UART.
5. **Log.** The fastest correct candidate per CPU and signature goes into the JSON log, merged
   with what the log held.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from microbuild.boards import Board
from microbuild.compiler.fusion import fuse_conv_add
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.validate import check_graph
from microbuild.compiler.variants import REFERENCE, Target, candidates, op_signature
from microbuild.errors import FitError, MicrobuildError
from microbuild.model.reader import read_model
from microbuild.tuning.log import TuningLog, board_kind


@dataclass
class Candidate:
    variant: str
    ticks: int | None = None  # median of the repeats, in timer ticks
    correct: bool | None = None
    problem: str = ""  # why it is not correct (first difference, or the status it returned)


@dataclass
class Measured:
    """One op signature: where it was measured and how each candidate did."""

    signature: str
    opcode: str
    model: str  # the .tflite path it was measured in
    position: int  # the op's position in that model's execution order
    also: int = 0  # further ops (in any of the models) sharing the signature
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def best(self) -> Candidate | None:
        good = [c for c in self.candidates if c.correct and c.ticks is not None]
        return min(good, key=lambda c: c.ticks) if good else None

    @property
    def reference(self) -> Candidate:
        return self.candidates[0]

    def to_entry(self, board: Board, timer_hz: int, warmup: int, repeat: int) -> dict[str, Any]:
        best = self.best
        return {
            "best": best.variant if best else REFERENCE,
            "candidates": {c.variant: {"ticks": c.ticks, "correct": c.correct,
                                       **({"problem": c.problem} if c.problem else {})}
                           for c in self.candidates},
            "timer_hz": timer_hz, "board": board.name, "board_kind": board_kind(board),
            "model": Path(self.model).name,
            "opcode": self.opcode, "warmup": warmup, "repeat": repeat,
            "measured": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }


@dataclass
class TuneReport:
    board: str
    cpu: str
    timer_hz: int
    log: Path
    measured: list[Measured]
    firmware: Path

    def to_dict(self) -> dict[str, Any]:
        return {"board": self.board, "cpu": self.cpu, "timer_hz": self.timer_hz,
                "log": str(self.log), "firmware": str(self.firmware),
                "signatures": [{"signature": m.signature, "opcode": m.opcode,
                                "model": m.model, "op": m.position, "also": m.also,
                                "best": m.best.variant if m.best else None,
                                "candidates": [c.__dict__ for c in m.candidates]}
                               for m in self.measured]}


# ---- 1. plan ---------------------------------------------------------------------------------------
@dataclass
class _Plan:
    target: Target
    measured: list[Measured]
    # per model path: op position -> the candidate list of its signature
    ops: dict[str, dict[int, list[str]]]

    @property
    def copies(self) -> int:
        return max((len(m.candidates) for m in self.measured), default=0)


def plan_tuning(board: Board, models: Sequence[str | Path], trials: int | None = None) -> _Plan:
    """Which signatures to measure, where, and with which candidates (the reference first, then
    the legal variants by rank; ``trials`` caps how many per signature, the reference included)."""
    target = Target.of_board(board)
    by_signature: dict[str, Measured] = {}
    ops: dict[str, dict[int, list[str]]] = {}
    for path in models:
        graph = read_model(path)
        check_graph(graph)
        graph = fuse_conv_add(graph)
        for position, op in enumerate(graph.operators):
            lowering = REGISTRY[op.opcode]
            names = candidates(lowering, op, graph, target)
            if len(names) < 2:
                continue
            ranked = [REFERENCE] + sorted(
                names[1:], key=lambda n: -next(v.rank for v in lowering.variants if v.name == n))
            if trials is not None:
                ranked = ranked[:max(1, trials)]
            signature = op_signature(op, graph)
            if signature in by_signature:
                by_signature[signature].also += 1
                names_here = [c.variant for c in by_signature[signature].candidates]
            else:
                by_signature[signature] = Measured(signature, op.opcode, str(path), position,
                                                   candidates=[Candidate(n) for n in ranked])
                names_here = ranked
            ops.setdefault(str(path), {})[position] = names_here
    return _Plan(target, list(by_signature.values()), ops)


def _copy_prefix(stem: str, k: int) -> str:
    return f"{stem}_k{k}"


def _batches(copies: int, per_firmware: int) -> list[list[int]]:
    """Candidate indices per firmware: the reference (0) in each, then the others in order."""
    others = list(range(1, copies))
    step = max(1, per_firmware - 1)
    return [[0] + others[i:i + step] for i in range(0, len(others), step)] or [[0]]


def _build_batch(board: Board, plan: _Plan, stems: dict[str, str], batch: list[int], out: Path,
                 toolchain: str | None):
    """One RPC firmware holding copy k of each model for every k in ``batch``: copy k runs
    candidate k of each of its measured signatures (the reference where a signature has fewer
    candidates, and for every other op)."""
    from microbuild.firmware.build import build_firmware

    firmware_models: dict[str, str] = {}
    forced: dict[str, dict[str, str]] = {}
    for path, positions in plan.ops.items():
        for k in batch:
            if k > 0 and not any(len(names) > k for names in positions.values()):
                continue  # nothing of this model is measured in copy k
            prefix = _copy_prefix(stems[path], k)
            firmware_models[prefix] = path
            forced[prefix] = {"*": REFERENCE, **{str(p): names[k] if len(names) > k
                                                   else REFERENCE
                                                   for p, names in positions.items()}}
    return build_firmware(board, firmware_models, out, executor="rpc", toolchain=toolchain,
                          model_variants=forced)


# ---- 2-5. build, check, time, log ---------------------------------------------------------------
def tune(board: Board, models: Sequence[str | Path], log: str | Path = "tune.json", *,
         out_dir: str | Path | None = None, trials: int | None = None, warmup: int = 1,
         repeat: int = 5, runner: str | None = None, port: str | None = None,
         toolchain: str | None = None, timeout: float = 10.0, seed: int = 0,
         progress: Callable[[str], None] | None = None) -> TuneReport:
    from microbuild.firmware.scons_tool import model_prefix
    from microbuild.device.device import connect

    say = progress or (lambda _line: None)
    if repeat < 1 or warmup < 0:
        raise MicrobuildError("--repeat must be at least 1 and --warmup at least 0")
    models = [Path(m) for m in models]
    for m in models:
        if not m.is_file():
            raise MicrobuildError(f"{m}: no such model file")
    plan = plan_tuning(board, models, trials)
    if not plan.measured:
        raise MicrobuildError(
            f"nothing to tune: no operator in {', '.join(m.name for m in models)} has a kernel "
            f"variant {plan.target.cpu} can run (features: "
            f"{', '.join(sorted(plan.target.features)) or 'none'})")
    n_candidates = sum(len(m.candidates) for m in plan.measured)
    say(f"{len(plan.measured)} operator signatures, {n_candidates} candidates, "
        f"{plan.copies} model copies (one per candidate) in one firmware if they fit")

    stems: dict[str, str] = {}
    for m in models:
        stem = model_prefix(m)
        while stem in stems.values():
            stem += "_"
        stems[str(m)] = stem
    out = Path(out_dir) if out_dir else Path("build") / f"{board.name}-tune"

    # All candidates in one firmware when it fits; otherwise as few firmwares as fit, each with
    # the reference copy (the inputs and outputs every candidate is checked against).
    per_firmware = plan.copies
    while True:
        batches = _batches(plan.copies, per_firmware)
        where = out if len(batches) == 1 else out / "1"
        say(f"building the candidate firmware in {where}"
            + (f" (1 of {len(batches)})" if len(batches) > 1 else "") + "...")
        try:
            first = _build_batch(board, plan, stems, batches[0], where, toolchain)
            break
        except FitError as err:
            if per_firmware <= 2:
                raise FitError(f"even the reference and one candidate do not fit {board.name} "
                               f"together: tune one model at a time, or place the weights in a "
                               f"larger region (memory.placement.weights in the board YAML).\n"
                               f"{err}") from None
            per_firmware = max(2, (per_firmware + 1) // 2)
            say(f"{plan.copies} model copies do not fit {board.name}; trying {per_firmware} "
                f"per firmware")

    hz = 0
    for number, batch in enumerate(batches, 1):
        if number == 1:
            build = first
        else:
            where = out / str(number)
            say(f"building the candidate firmware in {where} ({number} of {len(batches)})...")
            build = _build_batch(board, plan, stems, batch, where, toolchain)
        say(f"starting it on {board.name}...")
        with connect(board, build, runner=runner, port=port, timeout=timeout) as dev:
            hz = dev.info.timer_hz
            references = _reference_tensors(dev, plan, stems, seed)
            for index, measured in enumerate(plan.measured, 1):
                here = [k for k in batch if k < len(measured.candidates)]
                if here == [0] and number > 1:
                    continue  # only the reference of this signature here: measured already
                ref_in, ref_out = references[measured.signature]
                stem = stems[measured.model]
                for k in here:
                    _check(dev, _copy_prefix(stem, k), measured.position, ref_in, ref_out,
                           measured.candidates[k])
                _time(dev, stem, measured, here, warmup, repeat)
                say(_progress_line(index, len(plan.measured), measured))  # best so far

    tuning = TuningLog.load_or_empty(log)
    for measured in plan.measured:
        tuning.record(plan.target.cpu, measured.signature,
                      measured.to_entry(board, hz, warmup, repeat))
    saved = tuning.save(log)
    return TuneReport(board.name, plan.target.cpu, hz, saved, plan.measured, build.elf)


def _activation_slots(summary: dict[str, Any], op: dict[str, Any], kind: str
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


def _reference_tensors(dev, plan: _Plan, stems: dict[str, str], seed: int
                       ) -> dict[str, tuple[list[bytes], list[bytes]]]:
    """Run each model's reference copy op by op on a seeded input; for each measured op, the
    bytes of its workspace inputs just before it and of its outputs just after."""
    from microbuild.tensor_files import random_inputs

    wanted: dict[str, dict[int, str]] = {}
    for m in plan.measured:
        wanted.setdefault(m.model, {})[m.position] = m.signature
    found = {}
    for path, positions in wanted.items():
        prefix = _copy_prefix(stems[path], 0)
        model = dev._model(prefix)
        dev.write_inputs(prefix, random_inputs(dev.specs(prefix), seed))
        for position in range(max(positions) + 1):
            op = model.summary["ops"][position]
            if position in positions:
                ins = [dev.client.read(model.workspace_offset + offset, size)
                       for _, offset, size in _activation_slots(model.summary, op, "inputs")]
            status = dev.client.call(model.ops[position].index)
            if status != 0:
                raise MicrobuildError(f"the reference kernel of op {position} {op['opcode']} in "
                                      f"{Path(path).name} returned {status} on the device")
            if position in positions:
                outs = [dev.client.read(model.workspace_offset + offset, size)
                        for _, offset, size in _activation_slots(model.summary, op, "outputs")]
                found[positions[position]] = (ins, outs)
    return found


def _check(dev, prefix: str, position: int, ref_in: list[bytes], ref_out: list[bytes],
           candidate: Candidate) -> None:
    model = dev._model(prefix)
    op = model.summary["ops"][position]
    for (_, offset, _size), data in zip(_activation_slots(model.summary, op, "inputs"), ref_in):
        dev.client.write(model.workspace_offset + offset, data)
    status = dev.client.call(model.ops[position].index)
    if status != 0:
        candidate.correct, candidate.problem = False, f"returned {status}"
        return
    for k, ((_, offset, size), want) in enumerate(
            zip(_activation_slots(model.summary, op, "outputs"), ref_out)):
        got = dev.client.read(model.workspace_offset + offset, size)
        if got != want:
            a, b = np.frombuffer(got, np.uint8), np.frombuffer(want, np.uint8)
            first = int(np.argmax(a != b))
            candidate.correct = False
            candidate.problem = (f"output {k} differs from the reference in "
                                 f"{int(np.count_nonzero(a != b))} of {len(a)} bytes (first at "
                                 f"byte {first})")
            return
    candidate.correct = True


def _time(dev, stem: str, measured: Measured, ks: list[int], warmup: int, repeat: int) -> None:
    """Times candidates ``ks`` of ``measured`` in one batched TIMED_CALL."""
    from microbuild.device.rpc.protocol import TimedEntry

    entries = []
    for k in ks:
        model = dev._model(_copy_prefix(stem, k))
        entries.append(TimedEntry(model.ops[measured.position].index, warmup=warmup,
                                  repeat=repeat))
    dev.client.timed_call(entries)  # split into as few round trips as the max packet allows
    for candidate, entry in zip([measured.candidates[k] for k in ks], entries):
        if entry.status != 0:
            candidate.correct, candidate.problem = False, f"returned {entry.status} when timed"
        else:
            candidate.ticks = entry.median


def short_signature(signature: str) -> str:
    """The signature without its options, for tables."""
    return signature.split(" {", 1)[0]


def _progress_line(index: int, total: int, measured: Measured) -> str:
    parts = []
    for c in measured.candidates:
        if c.correct is False:
            parts.append(f"{c.variant} WRONG ({c.problem})")
        elif c.ticks is None:
            parts.append(f"{c.variant} (in a later firmware)")
        else:
            parts.append(f"{c.variant} {c.ticks:,}")
    best = measured.best
    ref = measured.reference.ticks
    gain = (f", {ref / best.ticks:.2f}x the reference" if best and best.ticks and ref else "")
    return (f"[{index}/{total}] {short_signature(measured.signature)}: {'; '.join(parts)} ticks"
            f" -> best {best.variant if best else 'none'}{gain}")
