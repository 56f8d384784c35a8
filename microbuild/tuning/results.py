"""What tuning found: per op signature, each candidate variant's time, correctness and costs, and
the report `microbuild tune` prints and writes (the log entry of each signature)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microbuild.boards import Board
from microbuild.compiler.tuning_log import board_kind
from microbuild.compiler.variants import REFERENCE
from microbuild.tuning.costs import entry_costs, growth


@dataclass
class Candidate:
    variant: str
    ticks: int | None = None  # median of the repeats, in timer ticks
    correct: bool | None = None
    problem: str = ""  # why it is not correct (first difference, or the status it returned)
    flash: int | None = None  # bytes of weights the measured op stores with this variant
    scratch: int | None = None  # bytes of workspace scratch the op needs with this variant


@dataclass
class Measured:
    """One op signature: where it was measured and how each candidate did."""

    signature: str
    opcode: str
    model: str  # the .tflite path it was measured in
    position: int  # the op's position in that model's execution order
    also: int = 0  # further ops (in any of the models) sharing the signature
    candidates: list[Candidate] = field(default_factory=list)
    default: str = REFERENCE  # the variant the board's CPU gets without tuning
    chosen: Candidate | None = None  # set when the choice is not simply the fastest
    why: str = ""  # why the choice is not the fastest (flash budget, fit)

    @property
    def fastest(self) -> Candidate | None:
        good = [c for c in self.candidates if c.correct and c.ticks is not None]
        return min(good, key=lambda c: c.ticks) if good else None

    @property
    def best(self) -> Candidate | None:
        """The choice the log records: the fastest correct candidate, unless a flash budget or
        the board's memory made the tuner choose another."""
        return self.chosen or self.fastest

    @property
    def default_candidate(self) -> Candidate | None:
        return next((c for c in self.candidates if c.variant == self.default), None)

    @property
    def reference(self) -> Candidate:
        return self.candidates[0]

    def to_entry(self, board: Board, timer_hz: int, warmup: int, repeat: int) -> dict[str, Any]:
        best, fastest, costs = self.best, self.fastest, entry_costs(self)
        return {
            "best": best.variant if best else REFERENCE,
            **({"fastest": fastest.variant, "why": self.why}
               if fastest and best and fastest.variant != best.variant else {}),
            "default": self.default,
            "candidates": {c.variant: {"ticks": c.ticks, "correct": c.correct,
                                       **costs[c.variant],
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
    max_flash: int | None = None  # the flash budget the choices kept to, in bytes
    flash_growth: int = 0  # bytes the chosen variants' weights add over the default kernels'
    notes: list[str] = field(default_factory=list)  # what the tuner had to do (fit, placement)
    # model file name -> {"tuned": ticks, "default": ticks}: step 8's whole runs, before any
    # choice went back to its default
    whole: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"board": self.board, "cpu": self.cpu, "timer_hz": self.timer_hz,
                "log": str(self.log), "firmware": str(self.firmware),
                "max_flash": self.max_flash, "flash_growth": self.flash_growth,
                "notes": list(self.notes), "whole": dict(self.whole),
                "signatures": [{"signature": m.signature, "opcode": m.opcode,
                                "model": m.model, "op": m.position, "also": m.also,
                                "default": m.default,
                                "best": m.best.variant if m.best else None,
                                "fastest": m.fastest.variant if m.fastest else None,
                                "why": m.why,
                                "candidates": [{**c.__dict__, "flash_growth": growth(m, c)}
                                               for c in m.candidates]}
                               for m in self.measured]}


def short_signature(signature: str) -> str:
    """The signature without its options, for tables."""
    return signature.split(" {", 1)[0]


def speedup(measured: Measured) -> str:
    """How many times faster the best candidate is than the reference ("12.93x"; "" when either
    has no time). Every speed figure tune prints is this ratio, never its inverse."""
    best, ref = measured.best, measured.reference.ticks
    return f"{ref / best.ticks:.2f}x" if best and best.ticks and ref else ""
