"""The message of a firmware that does not fit: each overflow, what uses the region, and what to
change, the biggest lever first."""

from __future__ import annotations

import re
import textwrap

from microbuild.errors import FitError
from microbuild.firmware.fit.elf import WORKSPACE_PART
from microbuild.firmware.fit.report import (DESCRIPTION, FitReport, Overflow, RegionUsage,
                                           split_lines)
from microbuild.firmware.workspaces import DATA_RESERVE
from microbuild.units import kib, nbytes

_NUMBER_UNIT = re.compile(r"(\d) (bytes?|KiB|MiB|B)\b")


def _op_list(ops: tuple[int, ...]) -> str:
    """"op 3", "ops 0-8", "ops 1, 4, 7"."""
    if len(ops) == 1:
        return f"op {ops[0]}"
    if list(ops) == list(range(ops[0], ops[-1] + 1)):
        return f"ops {ops[0]}-{ops[-1]}"
    return "ops " + ", ".join(str(i) for i in ops)


# --- the message ---------------------------------------------------------------------------------

def _advice(o: Overflow, regions: list[RegionUsage], split_from: bool = False) -> list[str]:
    """What the user can change for one overflowed region, the biggest lever first. A part is
    mentioned when changing it alone could fix the overflow, or when it is the largest user.
    ``split_from``: a workspace was split from this region already (its part was sized to the
    region's free space, leaving DATA_RESERVE for .data/.bss, which turned out too little)."""
    ram = next((r.writable for r in regions if r.name == o.region), True)
    run: dict[str, int] = {}
    for c in o.contributions:
        if c.role == "run":
            key = "code" if c.category in ("text", "rodata") else c.category
            run[key] = run.get(key, 0) + c.bytes
    largest = max(run, key=lambda k: run[k], default="")

    def matters(part: str) -> bool:
        return run.get(part, 0) > 0 and (run[part] >= o.over or part == largest)

    def elsewhere(need: int, must_write: bool) -> str:
        homes = [r for r in regions if r.name != o.region and r.free >= need
                 and (r.writable or not must_write)]
        if not homes:
            return ""
        return " (" + ", ".join(f"{r.name} has {kib(r.free)} free" for r in homes) + ")"

    levers: list[tuple[int, str]] = []
    if matters("workspace"):
        levers.append((run["workspace"], "place the workspace in a larger region "
                       "(memory.placement.workspace in the board YAML)"
                       + elsewhere(run["workspace"], True)
                       + ("" if split_from else
                          f" or list a second region after {o.region} to split it across them "
                          f"(workspace: [{o.region}, <region>])")))
    if matters("weights"):
        levers.append((run["weights"], "place the weights in a larger region "
                       "(memory.placement.weights in the board YAML)"
                       + elsewhere(run["weights"], False)))
    if matters("stack"):
        stack = f"lower memory.stack_size (now {kib(run['stack'])}) if the firmware needs less"
        levers.append((run["stack"], stack + " stack"))
    if matters("heap"):
        levers.append((run["heap"], f"lower memory.heap_size (now {kib(run['heap'])})"))
    if matters("code"):
        levers.append((run["code"], "optimise the code for size (-Os in toolchain.cflags)"))
    for w in o.widened:
        # A tuning log picks the fastest variant whatever its flash; --variant overrides it.
        levers.append((w.saving, f"build with `--variant {w.opcode}={w.compact}` ({w.variant} "
                       f"stores the {w.opcode} weights of {_op_list(w.ops)} widened to int16, "
                       f"{kib(w.bytes)}; {w.compact} runs the same arithmetic on int8 weights, "
                       f"{kib(w.saving)} less, and overrides a tuning log's choice)"))
    tips = [tip for _, tip in sorted(levers, key=lambda lever: -lever[0])]
    tips.append(f"choose a board with more {'RAM' if ram else 'flash'}")
    if matters("workspace") or matters("weights"):
        tips.append("use a smaller model")
    return tips


def _para(text: str) -> str:
    """A paragraph of the message: indented two spaces, wrapped at 100 columns."""
    glued = _NUMBER_UNIT.sub(lambda m: m.group(1) + "\0" + m.group(2), text)  # keep "8 bytes"
    return textwrap.fill(glued, 100, initial_indent="  ", subsequent_indent="  ",
                         break_long_words=False, break_on_hyphens=False).replace("\0", " ")


def _join_or(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + ", or " + items[-1]


def _overflow_summary(o: Overflow, at_least: bool = False) -> str:
    if o.region is None:
        return f"{nbytes(o.used)} lie outside every memory region"
    return f"region {o.region} overflows by {'at least ' if at_least else ''}{nbytes(o.over)}"


def fit_error(report: FitReport, lower_bound: str | None = None) -> FitError:
    """A :class:`FitError` explaining every overflow of ``report`` and what to do about it.

    ``lower_bound``: the report was estimated before linking, from part of the firmware only
    (see scons_fit.check_object_sizes); this paragraph says how, and the overflows are "at
    least" the numbers given."""
    if report.fits:
        raise ValueError("fit_error() called for a firmware that fits")
    summaries = [_overflow_summary(o, lower_bound is not None) for o in report.overflows]
    summary = summaries[0] if len(summaries) == 1 else "; ".join(summaries)
    lines = [f"The firmware does not fit on board {report.board}: {summary}."]
    if lower_bound:
        lines += ["", _para(lower_bound)]
    split = split_lines(report.workspaces)
    if split:
        lines += ["", *(_para(line) for line in split)]
    for o in report.overflows:
        lines.append("")
        if o.region is None:
            where = ", ".join(c.section for c in o.contributions)
            lines.append(f"  Outside every region ({where}):")
        else:
            padding = o.length + o.over - o.used
            pad = f" plus {padding:,} bytes of alignment padding" if padding > 0 else ""
            lines.append(_para(f"{o.region}: {nbytes(o.length)} at 0x{o.origin:08x}. The "
                               f"firmware places {nbytes(o.used)} there{pad}: {nbytes(o.over)} "
                               "more than the region holds."))
            for c in o.contributions:
                if c.bytes > o.length:
                    lines.append(_para(f"The {DESCRIPTION[c.category]} alone ({c.section}, "
                                       f"{kib(c.bytes)}) is larger than the whole region "
                                       f"({kib(o.length)})."))
            lines.append("  Using it:")
        width = max(len(c.label) for c in o.contributions)
        for c in o.contributions:
            lines.append(f"    {c.label:<{width}}  {c.bytes:>11,} bytes  {kib(c.bytes):>10}")
        if o.symbols:
            lines.append("  Largest symbols:")
            width = max(len(y.name) for y in o.symbols)
            for y in o.symbols:
                where = y.section + (" load image" if y.role == "load" else "")
                lines.append(f"    {y.name:<{width}}  {y.size:>11,} bytes  {kib(y.size):>10}"
                             f"  in {where}")
        if o.region is None:
            lines.append(_para("To fix it: check the memory regions in the board YAML and the "
                               "linker script; every section must be placed in one of them."))
        else:
            # A workspace split from this region: its first part (.mb_workspace) is here and
            # further parts (.mb_workspace_<region>) elsewhere.
            split_from = (any(c.section == ".mb_workspace" for c in o.contributions)
                          and any(c.section.startswith(WORKSPACE_PART)
                                  for r in report.regions for c in r.contributions))
            advice = _advice(o, report.regions, split_from)
            if split_from:
                advice.insert(0, f"the workspace split left {nbytes(DATA_RESERVE)} of "
                                 f"{o.region} for .data and .bss, and they need more: move them "
                                 f"to another region (memory.placement.data and .bss) or make "
                                 f"them smaller")
            lines.append(_para(f"To fix it: {_join_or(advice)}."))
    err = FitError("\n".join(lines))
    err.report = report  # type: ignore[attr-defined]
    return err
