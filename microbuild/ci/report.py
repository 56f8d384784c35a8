"""The matrix as one table (rich, Markdown, JSON), merging per-cell files, and the baseline check."""

from __future__ import annotations

import glob
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from microbuild.ci.cells import Cell, cell_from_build_json
from microbuild.errors import MicrobuildError

COLUMNS = ("board", "toolchain", "model", "executor", "text", "rodata", "data", "bss", "RAM %",
           "flash %", "status", "build s")
# Sizes the baseline check compares.
GROWTH_FIELDS = ("text", "rodata", "data", "bss", "ram_used", "flash_used")


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def table_rows(cells: Sequence[Cell]) -> list[tuple[str, ...]]:
    rows = []
    for c in cells:
        sized = c.status in ("ok", "does-not-fit")
        sizes = [f"{getattr(c, k):,}" if sized else "-" for k in ("text", "rodata", "data", "bss")]
        rows.append((c.board, c.toolchain, c.model, c.executor, *sizes,
                     _percent(c.ram_percent) if sized else "-",
                     _percent(c.flash_percent) if sized else "-",
                     c.status, f"{c.build_seconds:.1f}" if c.build_seconds else "-"))
    return rows


def markdown(cells: Sequence[Cell], regressions: Sequence["Growth"] = ()) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |",
             "|" + "|".join("---:" if i >= 4 and i != 10 else "---"
                            for i in range(len(COLUMNS))) + "|"]
    for row in table_rows(cells):
        lines.append("| " + " | ".join(row) + " |")
    counts = {s: sum(1 for c in cells if c.status == s) for s in
              ("ok", "does-not-fit", "not-applicable", "failed")}
    lines += ["", ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no cells"]
    failed = [c for c in cells if c.status == "failed"]
    if failed:
        lines += ["", "### Failures", ""]
        for c in failed:
            lines += [f"**{c.board} / {c.toolchain} / {c.model} / {c.executor}**", "", "```",
                      c.message.strip()[:4000], "```", ""]
    if regressions:
        lines += ["", "### Growth over the baseline", "",
                  "| board | toolchain | model | executor | size | baseline | now | growth |",
                  "|---|---|---|---|---|---:|---:|---:|"]
        for g in regressions:
            lines.append(f"| {' | '.join(g.key)} | {g.field} | {g.before:,} | {g.after:,} | "
                         f"+{g.after - g.before:,} B ({g.percent:+.1f}%) |")
    return "\n".join(lines) + "\n"


def write_json(path: Path, cells: Sequence[Cell]) -> None:
    Path(path).write_text(json.dumps([c.to_dict() for c in cells], indent=1) + "\n")


def read_cells(path: str | Path) -> list[Cell]:
    """Cells from a `ci --json` file (a list) or a `build --json` document (one cell)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise MicrobuildError(f"{path}: not a microbuild JSON file ({err})") from None
    if isinstance(data, list):
        return [Cell.from_dict(d) for d in data]
    if isinstance(data, dict) and "size" in data and "board" in data:
        return [cell_from_build_json(data)]
    raise MicrobuildError(f"{path}: neither `microbuild ci --json` cells nor `microbuild build "
                          "--json` output")


def merge(patterns: Sequence[str]) -> list[Cell]:
    """Cells from every file matching ``patterns`` (globs, ** allowed); later files win a tie."""
    files = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern, recursive=True))
        if not found:
            raise MicrobuildError(f"--merge {pattern}: no file matches")
        files += found
    cells: dict[tuple, Cell] = {}
    for f in files:
        for cell in read_cells(f):
            cells[cell.key] = cell
    return sorted(cells.values(), key=lambda c: c.key)


@dataclass
class Growth:
    key: tuple[str, str, str, str]
    field: str
    before: int
    after: int

    @property
    def percent(self) -> float:
        return 100.0 * (self.after - self.before) / self.before if self.before else float("inf")


def parse_threshold(text: str) -> tuple[int, float]:
    """--max-growth: "256" (bytes), "2%" (percent of the baseline) or "256,2%" (either limit
    exceeded fails). -1 means no limit of that kind."""
    max_bytes, max_percent = -1, -1.0
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if re.fullmatch(r"[0-9.]+%", part):
            max_percent = float(part[:-1])
        elif re.fullmatch(r"[0-9]+", part):
            max_bytes = int(part)
        else:
            raise MicrobuildError(f"--max-growth {text}: write bytes (256), a percentage (2%) or "
                                  "both (256,2%)")
    return max_bytes, max_percent


def compare(cells: Sequence[Cell], baseline: Sequence[Cell], max_growth: str = "0"
            ) -> list[Growth]:
    """Sizes that grew more than allowed: by more than the byte limit, or by more than the
    percentage limit (each limit applies if given). With the default "0", any growth fails."""
    max_bytes, max_percent = parse_threshold(max_growth)
    before = {c.key: c for c in baseline if c.status in ("ok", "does-not-fit")}
    grown = []
    for cell in cells:
        old = before.get(cell.key)
        if old is None or cell.status not in ("ok", "does-not-fit"):
            continue
        for field in GROWTH_FIELDS:
            a, b = getattr(old, field), getattr(cell, field)
            if b <= a:
                continue
            over_bytes = max_bytes >= 0 and b - a > max_bytes
            over_percent = max_percent >= 0 and (a == 0 or 100.0 * (b - a) / a > max_percent)
            if over_bytes or over_percent:
                grown.append(Growth(cell.key, field, a, b))
    return grown


def summary_counts(cells: Sequence[Cell]) -> dict[str, int]:
    return {s: sum(1 for c in cells if c.status == s)
            for s in ("ok", "does-not-fit", "not-applicable", "failed")}
