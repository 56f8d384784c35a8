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
5. **Cost.** Each candidate's flash (the weights its op stores) and RAM (its scratch) are read
   from the firmware built for it (microbuild/tuning/costs.py).
6. **Log.** The fastest correct candidate per CPU and signature goes into the JSON log, merged
   with what the log held; with ``max_flash``, the fastest choices whose weights grow the
   firmware by at most that much over the default kernels'.
7. **Fit.** The tuned firmware is built for the board; when it does not fit (a variant's wider
   weights), the choices are brought back within the flash that fits, and the report says so.
8. **Whole model.** Each model runs whole, timed, with the choices and with the default kernels
   (as `build` compiles them: ops the compiler streams row by row run in bands, which the
   op-by-op timing of step 4 does not see). Where the choices are slower, that model's
   signatures go back to their defaults, and the report says so: tuning never leaves a model
   slower than it found it on the board it tuned on.

When the reference and every candidate do not fit one firmware, they are spread over several
(each firmware with the reference copy when two copies fit, else one copy per firmware, the
reference measured in the first); a candidate whose copy of the model does not fit the board
alone is reported as such and never chosen.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from microbuild.boards import Board
from microbuild.compiler import compile_model, lowered_graph
from microbuild.compiler.c_names import model_prefix
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.variants import (REFERENCE, Selection, Target, allowing_float_reorder,
                                          candidates, default_variant, op_signature)
from microbuild.compiler.tuning_log import TuningLog
from microbuild.device.device import connect
from microbuild.errors import FitError, MicrobuildError
from microbuild.firmware.build import build_firmware
from microbuild.tensor_files import random_inputs
from microbuild.tuning.costs import (choose_within, growth, op_costs, parse_max_flash,
                                     total_growth)
from microbuild.tuning.on_device import (check_candidate, copy_prefix, floats_close,
                                         reference_tensors, time_candidates)
from microbuild.tuning.results import Candidate, Measured, TuneReport, short_signature, speedup


# ---- 1. plan ---------------------------------------------------------------------------------------
@dataclass
class TuningPlan:
    target: Target
    measured: list[Measured]
    # per model path: op position -> the candidate list of its signature
    ops: dict[str, dict[int, list[str]]]
    # per model path: op position -> its signature (the ops with candidates)
    signatures: dict[str, dict[int, str]] = field(default_factory=dict)
    # --allow-float-reorder: variants that reorder float sums are candidates (and every build
    # that forces one carries the permission)
    allow_float_reorder: bool = False

    @property
    def copies(self) -> int:
        return max((len(m.candidates) for m in self.measured), default=0)


def plan_tuning(board: Board, models: Sequence[str | Path], trials: int | None = None,
                allow_float_reorder: bool = False) -> TuningPlan:
    """Which signatures to measure, where, and with which candidates (the reference first, then
    the legal variants by rank; ``trials`` caps how many per signature, the reference included)."""
    target = Target.of_board(board)
    by_signature: dict[str, Measured] = {}
    ops: dict[str, dict[int, list[str]]] = {}
    signatures: dict[str, dict[int, str]] = {}
    for path in models:
        graph = lowered_graph(path)  # as compiled: op positions and signatures must match
        for position, op in enumerate(graph.operators):
            lowering = REGISTRY[op.opcode]
            names = candidates(lowering, op, graph, target, allow_float_reorder)
            if len(names) < 2:
                continue
            ranked = [REFERENCE] + sorted(
                names[1:], key=lambda n: -next(v.rank for v in lowering.variants if v.name == n))
            default = default_variant(lowering, op, graph, target)
            if trials is not None:
                ranked = ranked[:max(1, trials)]
            signature = op_signature(op, graph)
            if signature in by_signature:
                by_signature[signature].also += 1
                names_here = [c.variant for c in by_signature[signature].candidates]
            else:
                by_signature[signature] = Measured(signature, op.opcode, str(path), position,
                                                   candidates=[Candidate(n) for n in ranked],
                                                   default=default)
                names_here = ranked
            ops.setdefault(str(path), {})[position] = names_here
            signatures.setdefault(str(path), {})[position] = signature
    return TuningPlan(target, list(by_signature.values()), ops, signatures, allow_float_reorder)


def _build_batch(board: Board, plan: TuningPlan, stems: dict[str, str], batch: list[int], out: Path,
                 toolchain: str | None):
    """One RPC firmware holding copy k of each model for every k in ``batch``: copy k runs
    candidate k of each of its measured signatures (the reference where a signature has fewer
    candidates, and for every other op)."""
    firmware_models: dict[str, str] = {}
    forced: dict[str, dict[str, str]] = {}
    for path, positions in plan.ops.items():
        for k in batch:
            if k > 0 and not any(len(names) > k for names in positions.values()):
                continue  # nothing of this model is measured in copy k
            prefix = copy_prefix(stems[path], k)
            firmware_models[prefix] = path
            forced[prefix] = allowing_float_reorder(
                {"*": REFERENCE, **{str(p): names[k] if len(names) > k else REFERENCE
                                    for p, names in positions.items()}},
                plan.allow_float_reorder)
    # Each copy keeps a workspace of its own: the candidates of a signature are timed in one
    # TIMED_CALL, each on the inputs the check wrote into its workspace. Every op runs whole (no
    # row-streamed region): each measured op's tensors must be in the workspace, whole.
    return build_firmware(board, firmware_models, out, executor="rpc", toolchain=toolchain,
                          model_variants=forced, separate_workspace=True, row_stream=False)


# ---- 2-5. build, check, time, log ---------------------------------------------------------------
def _split(batch: list[int], per_firmware: int) -> list[list[int]]:
    """A batch that did not fit, as batches of ``per_firmware`` copies: the reference (0) in
    each while two copies fit, else every copy alone (the reference first)."""
    if per_firmware >= 2 and batch[0] == 0:
        return _batches(len(batch), per_firmware, batch[1:])
    return [[k] for k in batch]


def _batches(copies: int, per_firmware: int, others: list[int] | None = None
             ) -> list[list[int]]:
    """Candidate indices per firmware: the reference (0) in each, then the others in order."""
    others = list(range(1, copies)) if others is None else others
    step = max(1, per_firmware - 1)
    return [[0] + others[i:i + step] for i in range(0, len(others), step)] or [[0]]


def _record_costs(build, plan: TuningPlan, stems: dict[str, str], batch: list[int]) -> None:
    """Each candidate's flash and scratch, from the copy of the model built for it."""
    source = build.out_dir / "firmware.src"  # _build_batch's firmware name
    for measured in plan.measured:
        for k in batch:
            if k < len(measured.candidates):
                prefix = copy_prefix(stems[measured.model], k)
                folder = source / prefix
                if folder.is_dir():
                    c = measured.candidates[k]
                    c.flash, c.scratch = op_costs(folder, prefix, measured.position)


def _does_not_fit(plan: TuningPlan, k: int, board: Board) -> list[str]:
    """Mark the candidates of copy ``k`` (which does not fit the board even alone)."""
    names = []
    for measured in plan.measured:
        if k < len(measured.candidates):
            c = measured.candidates[k]
            c.correct = False
            c.problem = f"its copy of the model does not fit {board.name}"
            names.append(c.variant)
    return names


def tune(board: Board, models: Sequence[str | Path], log: str | Path = "tune.json", *,
         out_dir: str | Path | None = None, trials: int | None = None, warmup: int = 1,
         repeat: int = 5, runner: str | None = None, port: str | None = None,
         toolchain: str | None = None, timeout: float = 10.0, seed: int = 0,
         max_flash: str | int | None = None, check_fit: bool = True, check_whole: bool = True,
         allow_float_reorder: bool = False,
         progress: Callable[[str], None] | None = None) -> TuneReport:
    """Measure, choose and log (see the module's docstring). ``max_flash``: bytes (or "10%" of
    the default kernels' weights) the chosen variants' weights may add over the default
    kernels'; None for no limit. ``check_fit``: build the tuned firmware and, if it does not
    fit the board, choose within the flash that fits. ``check_whole``: step 8.
    ``allow_float_reorder``: float variants that reorder sums (not bit-exact with TFLM) are
    candidates too, checked against the reference within a float tolerance
    (on_device.check_candidate)."""
    say = progress or (lambda _line: None)
    if repeat < 1 or warmup < 0:
        raise MicrobuildError("--repeat must be at least 1 and --warmup at least 0")
    models = [Path(m) for m in models]
    for m in models:
        if not m.is_file():
            raise MicrobuildError(f"{m}: no such model file")
    budget = None
    if max_flash is not None:
        budget = parse_max_flash(max_flash, _default_weights(board, models)
                                 if str(max_flash).strip().endswith("%") else 0)
    plan = plan_tuning(board, models, trials, allow_float_reorder)
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
    notes: list[str] = []

    # All candidates in one firmware when it fits; otherwise as few firmwares as fit, each with
    # the reference copy (the inputs and outputs every candidate is checked against) while two
    # copies fit, else one copy per firmware.
    pending = _batches(plan.copies, plan.copies)
    number, hz, build, references = 0, 0, None, None
    while pending:
        batch = pending.pop(0)
        where = out if number == 0 and not pending else out / str(number + 1)
        say(f"building the candidate firmware in {where} (copies {', '.join(map(str, batch))})...")
        try:
            built = _build_batch(board, plan, stems, batch, where, toolchain)
        except FitError as err:
            if len(batch) > 1:
                # Halve the copies per firmware down to two (the reference and one candidate),
                # then one copy per firmware.
                per_firmware = max(2, (len(batch) + 1) // 2) if len(batch) > 2 else 1
                pending[0:0] = _split(batch, per_firmware)
                if per_firmware == 1:
                    # Every copy alone from now on; the reference once, unless measured already.
                    singles = [k for part in pending for k in part]
                    pending = [[k] for k in dict.fromkeys(singles)
                               if k != 0 or references is None]
                say(f"{len(batch)} model copies do not fit {board.name}; trying "
                    f"{per_firmware} per firmware")
                continue
            if batch == [0]:
                raise FitError(f"the model with reference kernels alone does not fit "
                               f"{board.name}, so its variants cannot be timed there.\n"
                               f"{err}") from None
            names = _does_not_fit(plan, batch[0], board)
            note = (f"copy {batch[0]} of the model ({', '.join(sorted(set(names)))}) does not fit "
                    f"{board.name} even alone: not timed, not chosen")
            notes.append(note)
            say(note)
            continue
        number += 1
        build = built
        _record_costs(build, plan, stems, batch)
        say(f"starting it on {board.name}...")
        with connect(board, build, runner=runner, port=port, timeout=timeout) as dev:
            hz = dev.info.timer_hz
            if 0 in batch:
                references = reference_tensors(dev, plan, stems, seed)
            assert references is not None  # the reference is in the first firmware that ran
            for index, measured in enumerate(plan.measured, 1):
                here = [k for k in batch if k < len(measured.candidates)]
                if not here or (here == [0] and number > 1):
                    continue  # only the reference of this signature here: measured already
                ref_in, ref_out = references[measured.signature]
                stem = stems[measured.model]
                for k in here:
                    check_candidate(dev, copy_prefix(stem, k), measured.position, ref_in, ref_out,
                                    measured.candidates[k],
                                    reorders_float_sums(measured, measured.candidates[k].variant))
                time_candidates(dev, stem, measured, here, warmup, repeat)
                say(_progress_line(index, len(plan.measured), measured))  # best so far
    assert build is not None

    report = TuneReport(board.name, plan.target.cpu, hz, Path(log), plan.measured, build.elf,
                        max_flash=budget, notes=notes)
    _choose(report, budget, say)
    if check_fit and not board.is_host:
        _fit_the_board(report, board, models, out, toolchain, log, hz, warmup, repeat, say)
    if check_whole:
        _check_whole_models(report, plan, board, models, stems, out / "whole", toolchain,
                            runner, port, timeout, seed, repeat, say)
    report.log = _save(report, board, log, hz, warmup, repeat)
    return report


def _choose(report: TuneReport, budget: int | None, say: Callable[[str], None],
            why: str = "") -> None:
    """Set each signature's choice: the fastest, or the fastest within ``budget`` bytes."""
    chosen = choose_within(report.measured, budget)
    for m in report.measured:
        c = chosen.get(m.signature)
        fastest = m.fastest
        m.chosen = c
        m.why = ""
        if c is not None and fastest is not None and c.variant != fastest.variant:
            m.why = why or f"within --max-flash {budget:,} bytes"
            say(f"{short_signature(m.signature)}: {c.variant} instead of the fastest "
                f"{fastest.variant} ({m.why}; {fastest.variant} adds "
                f"{growth(m, fastest) or 0:+,} bytes of weights, {c.variant} "
                f"{growth(m, c) or 0:+,})")
    report.max_flash = budget
    report.flash_growth = total_growth(report.measured, chosen)


def _save(report: TuneReport, board: Board, log: str | Path, hz: int, warmup: int,
          repeat: int) -> Path:
    tuning = TuningLog.load_or_empty(log)
    for measured in report.measured:
        tuning.record(report.cpu, measured.signature,
                      measured.to_entry(board, hz, warmup, repeat))
    return tuning.save(log)


def _weights_overflow(err: FitError, board: Board) -> int:
    """Bytes by which the regions holding the weights (or their load image) overflow, from the
    fit report a FitError carries; 0 when the overflow is elsewhere (RAM)."""
    report = getattr(err, "report_dict", None) or {}
    place = board.placement
    regions = {place.get("weights"), place.get("text")}
    return max((o["over"] for o in report.get("overflows", []) if o.get("region") in regions),
               default=0)


def _fit_the_board(report: TuneReport, board: Board, models: list[Path], out: Path,
                   toolchain: str | None, log: str | Path, hz: int, warmup: int, repeat: int,
                   say: Callable[[str], None]) -> None:
    """Build the tuned firmware (the models with the log's choices, the way `build --tuning`
    does); while its weights overflow the board, take back the flash growth that does not fit
    and choose again. A default build that does not fit is not the tuner's business."""
    for attempt in range(4):
        saved = _save(report, board, Path(out) / "tuned.json", hz, warmup, repeat)
        say(f"checking that the tuned firmware fits {board.name}...")
        try:
            build_firmware(board, [str(m) for m in models], Path(out) / "tuned",
                           toolchain=toolchain, tuning=saved)
            return
        except FitError as err:
            over = _weights_overflow(err, board)
            if not over or report.flash_growth <= 0:
                note = (f"the tuned firmware does not fit {board.name}, and not because of the "
                        f"variants' weights: {str(err).splitlines()[0]}")
                report.notes.append(note)
                say(note)
                return
            budget = report.flash_growth - over
            if report.max_flash is not None:
                budget = min(budget, report.max_flash)
            note = (f"the fastest variants' weights overflow {board.name} by {over:,} bytes: "
                    f"choosing within {max(0, budget):,} bytes of weights growth instead of "
                    f"{report.flash_growth:,}")
            report.notes.append(note)
            say(note)
            _choose(report, max(0, budget), say, why=f"the fastest does not fit {board.name}")
    note = (f"the tuned firmware did not fit {board.name} in 4 attempts; the last choice was not "
            f"built: check it with `microbuild build --tuning {shlex.quote(str(log))}`")
    report.notes.append(note)
    say(note)


# ---- 8. whole model -----------------------------------------------------------------------------
def _check_whole_models(report: TuneReport, plan: TuningPlan, board: Board, models: list[Path],
                        stems: dict[str, str], out: Path, toolchain: str | None,
                        runner: str | None, port: str | None, timeout: float, seed: int,
                        repeat: int, say: Callable[[str], None]) -> None:
    """Run each model whose choices differ from its defaults whole, both ways, and take back the
    choices of a model they make slower (see the module's docstring)."""
    by_signature = {m.signature: m for m in report.measured}
    copies: dict[str, tuple[Path, str, dict[str, str]]] = {}  # prefix -> (model, way, forced)
    for path in models:
        positions = plan.signatures.get(str(path), {})
        ways = {"tuned": {}, "default": {}}
        for position, signature in positions.items():
            m = by_signature[signature]
            ways["tuned"][str(position)] = m.best.variant if m.best else REFERENCE
            ways["default"][str(position)] = m.default
        if ways["tuned"] != ways["default"]:
            for way, forced in ways.items():
                copies[f"{stems[str(path)]}_{way}"] = (
                    path, way, allowing_float_reorder(forced, plan.allow_float_reorder))
    if not copies:
        return
    say(f"timing {len(copies) // 2} model(s) whole, tuned and with the default kernels...")
    # Both copies in one firmware, or one firmware each when two do not fit the board.
    groups = [list(copies)]
    ticks: dict[str, int] = {}
    outputs: dict[str, list[np.ndarray]] = {}
    while groups:
        group = groups.pop(0)
        try:
            build = build_firmware(
                board, {prefix: str(copies[prefix][0]) for prefix in group},
                out / (group[0] if len(group) == 1 else "all"), executor="rpc",
                toolchain=toolchain, model_variants={p: copies[p][2] for p in group})
        except FitError as err:
            if len(group) > 1:
                groups[0:0] = [[prefix] for prefix in group]
                continue
            note = (f"{group[0]} does not fit {board.name} for the whole-model check: "
                    f"{str(err).splitlines()[0]}")
            report.notes.append(note)
            say(note)
            continue
        ticks_here, outputs_here = _time_whole(build, board, group, runner, port, timeout,
                                               seed, repeat)
        ticks |= ticks_here
        outputs |= outputs_here
    for path in models:
        stem = stems[str(path)]
        tuned, default = f"{stem}_tuned", f"{stem}_default"
        if tuned not in ticks or default not in ticks:
            continue
        for a, b in zip(outputs[tuned], outputs[default]):
            if not (np.array_equal(a, b) or (plan.allow_float_reorder and floats_close(a, b))):
                raise MicrobuildError(f"{path.name}: the tuned kernels' outputs differ from the "
                                      "default kernels' when run whole; please report this")
        say(f"{path.name} whole: {ticks[tuned]:,} ticks tuned, {ticks[default]:,} with the "
            "default kernels")
        report.whole[path.name] = {"tuned": ticks[tuned], "default": ticks[default]}
        if ticks[tuned] <= ticks[default]:
            continue
        why = (f"{path.name} ran slower whole with the fastest ops ({ticks[tuned]:,} ticks) "
               f"than with the defaults ({ticks[default]:,})")
        for signature in set(plan.signatures[str(path)].values()):
            m = by_signature[signature]
            if m.best is not None and m.best.variant != m.default and m.default_candidate:
                m.chosen, m.why = m.default_candidate, why
        note = f"{why}: its operators keep the default kernels"
        report.notes.append(note)
        say(note)

    report.flash_growth = total_growth(report.measured, {m.signature: m.best for m in
                                                         report.measured if m.best})


def _time_whole(build, board: Board, prefixes: list[str], runner: str | None,
                port: str | None, timeout: float, seed: int, repeat: int
                ) -> tuple[dict[str, int], dict[str, list[np.ndarray]]]:
    """Each model's whole RUN on a seeded input: the fastest of the rounds (one under -icount,
    where every round is the same), and its outputs."""
    rounds = 1 if board.is_emulated else max(3, repeat)
    ticks, outputs = {}, {}
    with connect(board, build, runner=runner, port=port, timeout=timeout) as dev:
        for prefix in prefixes:
            x = random_inputs(dev.specs(prefix), seed)
            for _ in range(rounds):
                outputs[prefix], t = dev.run_timed(prefix, x)
                ticks[prefix] = min(t, ticks.get(prefix, t))
    return ticks, outputs


def reorders_float_sums(measured: Measured, variant: str) -> bool:
    """Whether ``variant`` of the measured op's operator adds float sums in another order."""
    lowering = REGISTRY.get(measured.opcode)
    return any(v.name == variant and v.reorders_float_sums
               for v in getattr(lowering, "variants", ()))


def _default_weights(board: Board, models: list[Path]) -> int:
    """Bytes of weights the models have with the board's default kernels (--max-flash N%)."""
    target = Target.of_board(board)
    return sum(compile_model(m, prefix=f"m{i}", selection=Selection(target)).weights_bytes
               for i, m in enumerate(models))


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
    ratio = speedup(measured)
    gain = f", {ratio} faster than the reference" if ratio else ""
    return (f"[{index}/{total}] {short_signature(measured.signature)}: {'; '.join(parts)} ticks"
            f" -> best {best.variant if best else 'none'}{gain}")
