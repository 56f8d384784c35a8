"""The SCons actions that check a firmware fits its board: the link (which explains a region
overflow from an over-full ELF), the pre-compile check of one object's size (avr-gcc), and the
fit report every build writes (microbuild's firmware and a generated SCons project alike)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from microbuild.boards import Board
from microbuild.compiler.emitter import weights_arrays
from microbuild.errors import MicrobuildError
from microbuild.firmware import workspaces
from microbuild.firmware.fit import (CATEGORIES, Contribution, FitReport, Overflow, RegionUsage,
                                     Symbol, analyze_elf, fit_error)
from microbuild.firmware.scons_env import board_of, knows_board, report_error
from microbuild.units import nbytes


def _unbounded_script(script: Path) -> Path:
    """A copy of a generated linker script whose regions are large enough for anything, so an
    over-full firmware still links and can be measured against the real regions."""
    text = script.read_text()

    def widen(m: re.Match) -> str:
        origin = int(m.group(1), 16)
        return f"ORIGIN = {m.group(1)}, LENGTH = {min(0x10000000, 0x100000000 - origin):#x}"

    copy = script.with_name(script.stem + ".unbounded.ld")
    copy.write_text(re.sub(r"ORIGIN = (0x[0-9a-fA-F]+), LENGTH = 0x[0-9a-fA-F]+", widen, text))
    return copy


def link_with_fit_check(target, source, env):
    """Link; if a memory region overflows, link again with the regions widened (and section
    overlap checks off) to get an ELF anyway, and explain from it what does not fit, instead of
    the linker's one-liner. (GNU ld's --noinhibit-exec would do for ld, but lld refuses to write
    an output after a region overflow; widening works for both.)"""
    command = env.subst_list("$MB_LINKLINE", target=target, source=source)[0]
    command = [str(c) for c in command]
    result = subprocess.run(command, capture_output=True, text=True, env=env["ENV"])
    if result.returncode == 0:
        sys.stderr.write(result.stderr)
        return 0
    overflow = re.search(r"overflowed by|will not fit in region|section .* overlaps",
                         result.stderr)
    scripts = [i for i, arg in enumerate(command) if arg.startswith("-T") and len(arg) > 2]
    if overflow and knows_board(env) and scripts:
        elf = str(target[0]) + ".overflow.elf"
        retry = list(command)
        retry[retry.index("-o") + 1] = elf
        retry[scripts[0]] = "-T" + str(_unbounded_script(Path(command[scripts[0]][2:])))
        retry.append("-Wl,--no-check-sections")
        setup = env.get("MICROBUILD_TOOLCHAIN")
        retry += list(getattr(setup, "unbounded_link_flags", []))  # avr-libc's crt limits
        Path(elf).unlink(missing_ok=True)  # never explain the overflow from an earlier attempt
        subprocess.run(retry, capture_output=True, text=True, env=env["ENV"])
        if Path(elf).is_file():
            report = analyze_elf(elf, board_of(env))
            if not report.fits:
                if fit_is_a_result():
                    # A matrix build records "does not fit" as this firmware's result: keep the
                    # over-full ELF as the target, and the fit report step says it does not fit.
                    shutil.copyfile(elf, str(target[0]))
                    return 0
                report_error(fit_error(report), target[0], report)
                return 1
    sys.stderr.write(result.stderr)
    return result.returncode


def check_object_sizes(target, source, env):
    """Before compiling a model for a toolchain that limits the size of one object (avr-gcc:
    32767 bytes), check its arrays: one over the limit would stop the build with the compiler's
    "size of array is too large". Such a model is too big for the board anyway; say so with the
    fit error, counted from the model alone (a lower bound: no code, strings or C library)."""
    board = board_of(env)
    setup = env["MICROBUILD_TOOLCHAIN"]
    limit = setup.max_object_bytes
    summary = json.loads(Path(str(source[0])).read_text())
    prefix = summary["prefix"]
    weights_text = Path(str(source[1])).read_text()
    # (symbol, bytes, kind): the arrays this model puts in the firmware (generated weights file
    # and the AOT table of firmware/aot.py).
    arrays = [(name, size, "weights") for name, size in weights_arrays(weights_text).items()]
    arrays.append((f"mb_aot_workspace_{prefix}", summary["workspace_bytes"], "workspace"))
    arrays += [(f"mb_aot_input_{prefix}_{k}", spec["bytes"], "rodata")
               for k, spec in enumerate(summary["inputs"])]
    too_big = sorted((a for a in arrays if a[1] > limit), key=lambda a: -a[1])
    if not too_big:
        Path(str(target[0])).write_text(json.dumps({"limit": limit, "largest": max(
            arrays, key=lambda a: a[1])}) + "\n")
        return 0

    name, size, _ = too_big[0]
    why = (f"{name} is {nbytes(size)}, more than the largest object {setup.family} can compile "
           f"({limit:,} bytes)")
    place = board.placement
    regions = board.regions
    usage = {r.name: RegionUsage(r.name, r.origin, r.length, r.access) for r in regions.values()}
    code_region = place["text"]
    symbols: dict[str, list[Symbol]] = {}
    totals = {"workspace": 0, "weights": 0, "rodata": 0}
    for symbol, nbytes_, kind in arrays:
        totals[kind] += nbytes_
    totals["weights"] = summary["weights_bytes"]  # the compiler's count; arrays are for names
    labels = {"workspace": f"{prefix} workspace", "weights": f"{prefix} weights",
              "rodata": f"{prefix} embedded inputs"}
    for kind, total in totals.items():
        if not total:
            continue
        region = place[kind]
        usage[region].contributions.append(
            Contribution(labels[kind], total, "run", regions[region].origin, kind))
        if kind != "workspace" and region != code_region and regions[region].writable:
            # Constant data in RAM is copied there at boot: its image is in flash too.
            usage[code_region].contributions.append(
                Contribution(labels[kind], total, "load", regions[code_region].origin, kind))
    for kind, size_ in (("stack", board.stack_size), ("heap", board.heap_size)):
        if size_:
            region = place[kind]
            usage[region].contributions.append(
                Contribution(f".{kind}", size_, "run", regions[region].origin, kind))
    for symbol, nbytes_, kind in arrays:
        symbols.setdefault(place[kind], []).append(
            Symbol(symbol, nbytes_, labels[kind], regions[place[kind]].origin, "run"))
    for r in usage.values():
        r.contributions.sort(key=lambda c: (-c.bytes, c.section))
        r.symbols = sorted(symbols.get(r.name, []), key=lambda y: (-y.size, y.name))[:8]
    overflows = [Overflow(r.name, r.origin, r.length, r.used, r.over, list(r.contributions),
                          list(r.symbols)) for r in usage.values() if r.over > 0]
    if not overflows:
        report_error(MicrobuildError(
            f"model '{prefix}' cannot be built for board {board.name}: {why}; split or shrink "
            f"that tensor"), target[0])
        return 1
    known = {"workspace": totals["workspace"], "weights": totals["weights"],
             "rodata": totals["rodata"], "stack": board.stack_size, "heap": board.heap_size}
    report = FitReport(elf_path="", board=board.name, is_host=False, sections=[],
                       totals={c: known.get(c, 0) for c in CATEGORIES},
                       regions=list(usage.values()), overflows=overflows)
    report_error(fit_error(report, lower_bound=(
        f"Counted from the model alone, before compiling: {why}, so the firmware cannot even "
        f"be built. Code, strings and the C library would add to these numbers.")),
        target[0], report)
    return 1


def fit_report_action(target, source, env):
    """MicroFirmware's fit report: source[0] the ELF, then the models' summaries (which models
    share a workspace, for the report)."""
    summaries = [json.loads(Path(str(s)).read_text()) for s in source[1:]
                 if str(s).endswith(".json")]
    groups = workspaces.workspace_groups(summaries, env["MICROBUILD_SEPARATE_WORKSPACE"])
    return write_fit_report(str(source[0]), board_of(env), target[0],
                            workspaces.describe(summaries, groups), fit_is_a_result())


def write_fit_report(elf: str, board: Board, target,
                     workspace_arrays: list[dict[str, Any]] | None = None,
                     fit_is_result: bool = False) -> int:
    """The fit-report step of an SCons build: analyse ``elf`` for ``board``, write the report
    as JSON to ``target`` (with the error's text when it does not fit), report the error; the
    step's exit status. ``workspace_arrays``: which models use which workspace array
    (firmware/workspaces.py describe()). ``fit_is_result``: "does not fit" is the build's result, not a failure
    (a matrix build keeps it, and does not rebuild it, like any other result)."""
    report = analyze_elf(elf, board, workspaces=workspace_arrays)
    document = report.to_dict()
    if not report.fits:
        document["fit_error"] = str(fit_error(report))
    Path(str(target)).write_text(json.dumps(document, indent=1) + "\n")
    if not report.fits:
        report_error(fit_error(report), target, report)
        return 0 if fit_is_result else 1
    return 0


def fit_is_a_result() -> bool:
    return bool(os.environ.get("MICROBUILD_FIT_IS_RESULT"))
