"""What a kernel variant costs besides time: the flash its op's weights take, and the RAM (scratch
in the workspace) it needs; and choosing the fastest variants within a flash budget.

Variants may store an op's weights differently from the model (dsp16 widens filters to int16,
others add a per-channel bias term), so a faster kernel can grow the firmware: person_detect's
tuned weights grew by 80 % for 10 % fewer instructions. The tuner measures each candidate's cost
from the tuning firmware it built anyway: the weights arrays the compiler wrote for the measured
op in that candidate's copy of the model, and the op's scratch bytes in that copy's summary.

A signature's choice applies to every op with that signature, so its flash growth counts once per
such op.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from microbuild.compiler.emitter import weights_arrays
from microbuild.errors import MicrobuildError

if TYPE_CHECKING:
    from microbuild.tuning.results import Candidate, Measured

def op_costs(model_dir: Path, prefix: str, position: int) -> tuple[int, int]:
    """(flash, scratch) of the op at ``position`` in the model compiled as ``prefix`` into
    ``model_dir``: the bytes of the weights arrays only that op reads (``<prefix>_op<N>_*``, the
    variant's own) plus the model's constant tensors it reads (``<prefix>_t<K>``), and the
    op's scratch bytes in the workspace."""
    summary = json.loads((model_dir / f"{prefix}.json").read_text())
    arrays = weights_arrays((model_dir / f"{prefix}_weights.c").read_text())
    op = summary["ops"][position]
    own = f"{prefix}_op{op['index']}_"
    flash = sum(size for name, size in arrays.items() if name.startswith(own))
    flash += sum(arrays.get(f"{prefix}_t{t}", 0) for t in op["inputs"] if t >= 0)
    return flash, int(op.get("scratch_bytes") or 0)


def parse_max_flash(text: str | int | None, default_flash: int) -> int | None:
    """``--max-flash``: bytes (``4096``, ``4k``, ``4KiB``) or a percentage of ``default_flash``
    (``10%``) the tuned choices may add over the default kernels'. None: no limit."""
    if text is None:
        return None
    if isinstance(text, int):
        return text
    value = str(text).strip()
    try:
        if value.endswith("%"):
            return int(float(value[:-1]) * default_flash / 100)
        m = re.fullmatch(r"(\d+)\s*([kKmM]?)(i?[bB])?", value)
        if not m:
            raise ValueError(value)
        return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
    except ValueError:
        raise MicrobuildError(f"--max-flash {text}: give bytes (4096, 4k) or a percentage of the "
                              "default kernels' weights (10%)") from None


def growth(measured: "Measured", candidate: "Candidate") -> int | None:
    """Flash the firmware gains when ``measured``'s signature runs ``candidate`` instead of the
    default kernel, over every op with that signature; None when not measured."""
    base = measured.default_candidate
    if candidate.flash is None or base is None or base.flash is None:
        return None
    return (candidate.flash - base.flash) * (1 + measured.also)


def choose_within(measured: list["Measured"], budget: int | None) -> dict[str, "Candidate"]:
    """The variant per signature: the fastest correct one when ``budget`` is None; else the
    fastest set whose total flash growth over the default kernels stays within ``budget`` bytes.

    Start from each signature's fastest candidate that does not grow the flash (the default
    kernel is one), then spend the budget greedily on the upgrades that save the most ticks per
    byte added (every op with the signature counts), free ones first."""
    chosen: dict[str, Candidate] = {}
    for m in measured:
        good = [c for c in m.candidates if c.correct and c.ticks is not None]
        if not good:
            continue
        if budget is None:
            chosen[m.signature] = min(good, key=lambda c: c.ticks)
            continue
        free = [c for c in good if (growth(m, c) or 0) <= 0]
        chosen[m.signature] = (min(free, key=lambda c: c.ticks) if free
                               else min(good, key=lambda c: growth(m, c) or 0))
    if budget is None:
        return chosen
    spent = sum(growth(m, chosen[m.signature]) or 0 for m in measured if m.signature in chosen)
    while True:
        best_upgrade, best_value = None, 0.0
        for m in measured:
            if m.signature not in chosen:
                continue
            now = chosen[m.signature]
            for c in m.candidates:
                if not c.correct or c.ticks is None or c.ticks >= now.ticks:
                    continue
                extra = (growth(m, c) or 0) - (growth(m, now) or 0)
                if spent + extra > budget:
                    continue
                saved = (now.ticks - c.ticks) * (1 + m.also)
                value = float("inf") if extra <= 0 else saved / extra
                if best_upgrade is None or value > best_value:
                    best_upgrade, best_value = (m, c, extra), value
        if best_upgrade is None:
            return chosen
        m, c, extra = best_upgrade
        chosen[m.signature] = c
        spent += extra


def total_growth(measured: list["Measured"], chosen: dict[str, "Candidate"]) -> int:
    return sum(growth(m, chosen[m.signature]) or 0 for m in measured if m.signature in chosen)


def entry_costs(measured: "Measured") -> dict[str, dict[str, Any]]:
    """Per candidate, what the log records besides its time."""
    return {c.variant: {"flash": c.flash, "scratch": c.scratch, "flash_growth": growth(measured, c)}
            for c in measured.candidates}
