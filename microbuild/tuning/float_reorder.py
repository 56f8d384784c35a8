"""How far a model's outputs move from TFLM's when its kernels reorder float sums.

A variant with ``reorders_float_sums`` (the Helium float kernels, microbuild/compiler/f32/mve.py)
is chosen only with ``--allow-float-reorder``, and then `compile` and `build` measure what it
costs in accuracy on the user's model, on a seeded input, rather than promise a bound:

- one RPC firmware holds the model twice: with the chosen kernels, and with the same choices
  minus the reordering ones (the exact float kernels, bit-exact with TFLM built for this core);
- both copies run on the same seeded input (a stateful model from its reset state), on the board
  when it is emulated or the host, else on a built-in emulated board with the same core;
- the report gives the largest absolute difference, the largest difference in ULPs (units in the
  last place of float32) and the largest relative difference over every output element, and both
  copies' timer ticks (instructions under QEMU's -icount).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from microbuild.boards import Board, resolve_board
from microbuild.compiler.variants import FLOAT_REORDER_KEY, Target, allowing_float_reorder
from microbuild.errors import MicrobuildError
from microbuild.tensor_files import random_inputs


@dataclass
class ReorderReport:
    """The measured difference between the reordering kernels' outputs and TFLM's."""

    model: str
    board: str  # where it ran
    ops: list[str]  # the ops that run a reordering kernel, e.g. "op 3 CONV_2D (mve_f32)"
    seed: int
    elements: int  # output elements compared
    differing: int  # how many differ at all
    max_abs: float
    max_ulp: int
    max_relative: float  # |a - b| / max(|b|, FLT_MIN) at its largest
    ticks_reordered: int
    ticks_exact: int
    timer_hz: int = 0  # ticks per second (under QEMU -icount shift=0: ticks * 1e9 / hz insns)
    # Both copies' outputs, for a caller that wants more than the figures (not in to_dict).
    outputs: dict[str, list[np.ndarray]] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "outputs"}

    def lines(self) -> list[str]:
        """The report as `compile` and `build` print it."""
        return [
            f"NOT bit-exact with TFLM: {', '.join(self.ops)} "
            f"{'adds' if len(self.ops) == 1 else 'add'} float sums in another order than TFLM "
            "(--allow-float-reorder).",
            f"measured on {self.board}, seeded input (seed {self.seed}), against the exact "
            f"float kernels (bit-exact with TFLM built for this core): {self.differing} of "
            f"{self.elements} output values differ; largest difference {self.max_abs:.3g} "
            f"absolute, {self.max_ulp} ULP, {self.max_relative:.3g} relative",
            f"ticks per inference: {self.ticks_reordered:,} reordered, {self.ticks_exact:,} "
            "exact"]


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many float32 values lie between a and b, element by element (0: the same bits, or
    +0 and -0): the float bit patterns mapped to a line of integers ordered like the floats."""
    def ordered(x: np.ndarray) -> np.ndarray:
        bits = np.ascontiguousarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)

    return np.abs(ordered(a) - ordered(b))


def compare_outputs(reordered: list[np.ndarray], exact: list[np.ndarray]
                    ) -> tuple[int, int, float, int, float]:
    """(elements, differing, max abs, max ULP, max relative) over every float32 output."""
    elements = differing = max_ulp = 0
    max_abs = max_relative = 0.0
    tiny = float(np.finfo(np.float32).tiny)
    for a, b in zip(reordered, exact):
        if a.dtype != np.float32:
            continue  # an integer output (after a QUANTIZE): no ULPs to count
        a, b = a.astype(np.float32).ravel(), b.astype(np.float32).ravel()
        elements += a.size
        ulps = ulp_distance(a, b)
        differing += int(np.count_nonzero(ulps))
        if a.size:
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            max_abs = max(max_abs, float(diff.max()))
            max_ulp = max(max_ulp, int(ulps.max()))
            max_relative = max(max_relative, float(
                (diff / np.maximum(np.abs(b.astype(np.float64)), tiny)).max()))
    return elements, differing, max_abs, max_ulp, max_relative


def measuring_board(board: Board) -> Board:
    """The board to measure on: ``board`` itself when it runs here (emulated or host), else a
    built-in emulated board with the same core and variant features."""
    if board.is_emulated or board.is_host:
        return board
    from microbuild.boards.loader import available_boards

    target = Target.of_board(board)
    for name in sorted(available_boards()):
        try:
            other = resolve_board(name)
        except MicrobuildError:
            continue
        if other.is_emulated and Target.of_board(other) == target:
            return other
    raise MicrobuildError(
        f"{board.name}: no emulated board with a {target.cpu} to measure the reordered float "
        f"kernels on; run the model on the board and compare with `microbuild build "
        f"--board {board.name} --run` without --allow-float-reorder")


def measure_float_reorder(board: str | Path | Board, model: str | Path, *,
                          tuning: str | Path | None = None,
                          variants: Mapping[str, str] | None = None, seed: int = 0,
                          ops: list[str] | None = None, toolchain: str | None = None,
                          timeout: float = 120.0) -> ReorderReport:
    """Run ``model`` with the kernels ``tuning``/``variants`` choose with --allow-float-reorder
    and with the same choices without it, in one firmware, and compare (see the module's
    docstring). ``ops`` names the reordering ops for the report."""
    return measure_float_reorder_many(board, [model], tuning=tuning, variants=variants,
                                      seed=seed, ops=[ops or []], toolchain=toolchain,
                                      timeout=timeout)[0]


def measure_float_reorder_many(board: str | Path | Board, models: list[str | Path], *,
                               tuning: str | Path | None = None,
                               variants: Mapping[str, str] | None = None, seed: int = 0,
                               ops: list[list[str]] | None = None,
                               toolchain: str | None = None, timeout: float = 120.0
                               ) -> list[ReorderReport]:
    """measure_float_reorder for several models, all in one firmware (two copies of each)."""
    from microbuild.device.device import connect
    from microbuild.firmware.build import build_firmware

    where = measuring_board(resolve_board(board))
    forced = {k: v for k, v in (variants or {}).items() if k != FLOAT_REORDER_KEY}
    ways = {"reordered": allowing_float_reorder(forced), "exact": forced}
    copies = {f"m{k}_{way}": (str(model), choices) for k, model in enumerate(models)
              for way, choices in ways.items()}
    outputs, ticks = {}, {}
    with tempfile.TemporaryDirectory(prefix="mb-reorder-") as tmp:
        build = build_firmware(where, {p: path for p, (path, _) in copies.items()},
                               Path(tmp) / "fw", executor="rpc", toolchain=toolchain,
                               tuning=tuning, separate_workspace=True,
                               model_variants={p: choices for p, (_, choices) in copies.items()})
        with connect(where, build, timeout=timeout) as dev:
            hz = dev.info.timer_hz
            for prefix in copies:
                dev.reset(prefix)
                x = random_inputs(dev.specs(prefix), seed)
                outputs[prefix], ticks[prefix] = dev.run_timed(prefix, x)
    reports = []
    for k, model in enumerate(models):
        reordered, exact = f"m{k}_reordered", f"m{k}_exact"
        names = list(ops[k]) if ops and k < len(ops) else []
        report = ReorderReport(Path(model).name, where.name, names, seed,
                               *compare_outputs(outputs[reordered], outputs[exact]),
                               ticks[reordered], ticks[exact], hz,
                               outputs={"reordered": outputs[reordered], "exact": outputs[exact]})
        reports.append(report)
    return reports


def reordering_ops(summary: Mapping[str, Any]) -> list[str]:
    """The ops of a compiled model's summary whose kernel reorders float sums, as the report
    names them ("op 3 CONV_2D (mve_f32)")."""
    from microbuild.compiler.ops import REGISTRY

    found = []
    for op in summary["ops"]:
        lowering = REGISTRY.get(op["opcode"])
        variant = next((v for v in getattr(lowering, "variants", ())
                        if v.name == op["kernel"]), None)
        if variant is not None and variant.reorders_float_sums:
            found.append(f"op {op['index']} {op['opcode']} ({op['kernel']})")
    return found
