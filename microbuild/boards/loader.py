"""Loading a board: its file found on the search path (search_path.py), ``extends:`` resolved
(extends.py), and the result validated here, against the schema and then the checks a schema
cannot express (memory regions, clocks, drivers, runners, boot), every problem at its file:line.
"""

from __future__ import annotations

import json
import os
import shlex
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from microbuild.boards.board import WRITABLE_SECTIONS, Board
from microbuild.boards.clocks import clock_problems
from microbuild.boards.drivers import (DRIVER_KEYS, SOURCE_KEYS, builtin_drivers, names_a_file,
                                       value_at)
from microbuild.boards.extends import Resolved, resolve, under
from microbuild.boards.search_path import (ENV_PATH, available_boards, builtin_boards_dir,
                                           find_board_file, search_path)
from microbuild.boards.source import KeyPath, Problem, format_key_path
from microbuild.boards.runner_declarations import flash_entry_problems
from microbuild.boards.sizes import parse_size
from microbuild.errors import BoardError
from microbuild.errors import did_you_mean as _did_you_mean

# Which CPU architectures each toolchain family can target: a property of the toolchains, not of
# any board, so it lives here rather than in board files.
FAMILY_ARCHES = {
    "gcc-arm-none-eabi": ("armv6-m", "armv7-m", "armv7e-m", "armv8-m.main", "armv8.1-m.main"),
    "clang": ("armv6-m", "armv7-m", "armv7e-m", "armv8-m.main", "armv8.1-m.main",
              "rv32imac", "rv32imc", "rv32im", "x86_64"),
    "gcc-riscv-elf": ("rv32imac", "rv32imc", "rv32im"),
    "host-gcc": ("x86_64",),
    "host-clang": ("x86_64",),
    "avr-gcc": ("avr5",),
}


@lru_cache(maxsize=1)
def board_schema() -> dict[str, Any]:
    text = resources.files("microbuild").joinpath("schema/board.schema.json").read_text()
    return json.loads(text)


# --- validation -------------------------------------------------------------------------------

_TYPE_NAMES = {"string": "a string", "integer": "an integer", "object": "a mapping",
               "array": "a list", "number": "a number", "boolean": "true or false"}


def _yaml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "nothing (null)"
    return type(value).__name__


def schema_problems(data: Any, schema: dict[str, Any], location) -> list[Problem]:
    """Every way ``data`` breaks the JSON ``schema``, as Problems that say where (``location``:
    key path -> Location) and what to do (did-you-mean for unknown keys and values). Used for
    board files and for other YAML files microbuild reads the same way (microbuild.yaml)."""
    return [problem for problem, _ in _schema_findings(data, schema, location)]


# The most problems looked for in one file: past that the file is not a board being edited, and
# suggesting names for thousands of unknown keys would take seconds.
MAX_PROBLEMS = 100


def _schema_findings(data: Any, schema: dict[str, Any], location,
                     limit: int = MAX_PROBLEMS) -> list[tuple[Problem, KeyPath]]:
    """schema_problems (the first ``limit``), each with the key path it makes unusable (for a
    missing key, the key itself rather than the mapping the problem is reported on)."""
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in validator.iter_errors(data):
        if len(problems) >= limit:
            break
        path = tuple(error.absolute_path)
        kind = error.validator
        if kind == "additionalProperties":
            allowed = error.schema.get("properties", {})
            for extra in sorted(set(error.instance) - set(allowed), key=str)[:limit]:
                problems.append((Problem(location(path + (extra,)), path + (extra,),
                                         f"unknown key{_did_you_mean(extra, allowed)}; "
                                         f"allowed here: {', '.join(allowed)}"), path + (extra,)))
            continue
        subject = path
        if kind == "required":
            missing = error.message.split("'")[1]
            message = f"missing required key '{missing}'"
            subject = path + (missing,)
        elif kind == "type":
            wanted = error.validator_value
            wanted = [wanted] if isinstance(wanted, str) else wanted
            message = (f"expected {' or '.join(_TYPE_NAMES.get(w, w) for w in wanted)}, "
                       f"got {_yaml_type(error.instance)}")
        elif kind == "enum":
            message = (f"{error.instance!r} is not one of: "
                       f"{', '.join(str(v) for v in error.validator_value)}"
                       f"{_did_you_mean(str(error.instance), [str(v) for v in error.validator_value])}")
        elif kind == "oneOf" and path and path[-1] in ("length", "stack_size", "heap_size"):
            message = f"{error.instance!r} is not a size: write bytes as an integer, or like 256K or 1M"
        elif kind == "oneOf" and path[-1:] == ("workspace",) and "placement" in path:
            message = (f"{error.instance!r}: name one region (workspace: dtcm) or list different "
                       f"regions in order of preference (workspace: [dtcm, axi_sram])")
        elif kind == "pattern" and path == ("name",):
            message = f"{error.instance!r}: use lower-case letters, digits, '-', '_' or '.'"
        else:
            message = error.message
        problems.append((Problem(location(path), path, message), subject))
    return problems


def _semantic_problems(resolved: Resolved, expected_name: str,
                       usable=lambda key_path, whole=True: True,
                       limit: int = MAX_PROBLEMS) -> list[Problem]:
    """What the schema cannot say: names, toolchains, memory layout, drivers, runners. Each check
    runs only on parts of the board the schema accepted (``usable(key_path)``: the value there
    and, with ``whole=False``, not everything inside it), so a file with a bad value and an
    overlap elsewhere gets both reported at once. At most ``limit`` problems."""
    problems: list[Problem] = []

    def add(path: KeyPath, message: str) -> None:
        if len(problems) >= limit:
            raise _TooManyProblems
        problems.append(Problem(resolved.location(path), path, message))

    try:
        _check_semantics(resolved, expected_name, usable, add)
    except _TooManyProblems:
        pass
    return problems


def _check_semantics(resolved: Resolved, expected_name: str, usable, add) -> None:
    data = resolved.data
    if usable(("name",)) and data["name"] != expected_name:
        add(("name",), f"'{data['name']}' differs from the file name '{expected_name}.yaml'; "
                       f"a board's name is its file name")

    arch = data["cpu"]["arch"] if usable(("cpu", "arch")) else None
    known_arches = sorted({a for arches in FAMILY_ARCHES.values() for a in arches})
    if arch is not None and arch not in known_arches:
        add(("cpu", "arch"), f"no toolchain microbuild knows builds for '{arch}'"
                             f"{_did_you_mean(arch, known_arches)}; known: {', '.join(known_arches)}")
        return
    if arch is not None and usable(("toolchain",)):
        for i, tc in enumerate([data["toolchain"]] + data["toolchain"].get("alternatives", [])):
            path = ("toolchain", "family") if i == 0 else ("toolchain", "alternatives", i - 1, "family")
            if arch not in FAMILY_ARCHES[tc["family"]]:
                add(path, f"toolchain '{tc['family']}' cannot build for {arch}; "
                          f"it builds for {', '.join(FAMILY_ARCHES[tc['family']])}")

    memory = data.get("memory")
    if memory and usable(("memory", "regions"), whole=False):
        for problem in _overlap_problems(resolved, usable):
            add(problem.key_path, problem.message)
    if memory and usable(("memory", "regions"), whole=False) and usable(("memory", "placement")):
        regions = memory["regions"]
        placed = [(section, name, ("memory", "placement", section))
                  for section, name in memory["placement"].items() if not isinstance(name, list)]
        # A workspace listing several regions (order of preference): each must be one.
        workspace = memory["placement"].get("workspace")
        if isinstance(workspace, list):
            placed += [("workspace", name, ("memory", "placement", "workspace", i))
                       for i, name in enumerate(workspace)]
        for section, region_name, path in placed:
            if region_name not in regions:
                add(path, f"{section} is placed in '{region_name}', which is not a region here"
                          f"{_did_you_mean(region_name, regions)}; regions: {', '.join(regions)}")
            elif (section in WRITABLE_SECTIONS and usable(("memory", "regions", region_name))
                    and "w" not in regions[region_name]["access"]):
                add(path, f"{section} is written at run time but region '{region_name}' is "
                          f"{regions[region_name]['access']} (not writable); place it in a rw/rwx region")
    if memory and usable(("memory", "regions"), whole=False) and usable(("memory", "placement")):
        for path, message in _model_slot_problems(memory):
            add(path, message)
    if memory and usable(("memory",)) and usable(("flash",)):
        for path, message in _boot_problems(data):
            add(path, message)

    exit_driver = data.get("exit", {}).get("driver") if usable(("exit",)) else None
    if exit_driver == "sifive_test" and "base" not in data["exit"]:
        add(("exit",), "the sifive_test exit driver needs `base:`, the test device's address "
                       "(0x100000 on QEMU's RISC-V virt)")
    if exit_driver == "semihosting" and arch is not None and not arch.startswith("armv"):
        add(("exit", "driver"), f"semihosting exit is for Arm cores; this board is {arch}")
    if exit_driver == "process" and arch is not None and arch != "x86_64":
        add(("exit", "driver"), "the process exit driver is for the host board only")

    if usable(("cpu",)) and usable(("timer",)) and usable(("qemu",)):
        clock_problems(data, add, lambda key_path: str(resolved.location(key_path)))

    for kind, key_path in DRIVER_KEYS.items():
        value = value_at(data, key_path)
        if value is None or names_a_file(value) or not usable(key_path):
            continue
        builtin = builtin_drivers(kind)
        if value not in builtin:
            add(key_path, f"no built-in {kind} driver '{value}'{_did_you_mean(value, builtin)}; "
                          f"built-in: {', '.join(builtin)}; or name a C file of the board's own, "
                          f"relative to the board file (e.g. my_{kind}.c)")
    for kind, key_path in SOURCE_KEYS.items():
        value = value_at(data, key_path)
        if value is not None and names_a_file(value) and usable(key_path):
            file = _source_file(resolved, key_path, value)
            if not file.is_file():
                add(key_path, f"no file {file} (a board's own {kind} source is relative to the "
                              f"board file that names it)")
    if "init" in data and "init_source" in data:
        add(("init_source",), "a board has either an `init:` snippet or an `init_source:` file, "
                              "not both; write `init: null` to drop an inherited snippet")
    transport = data.get("transport")
    if "init_source" in data and isinstance(transport, dict) and "init" in transport:
        add(("transport", "init"), "the board's `init_source:` file defines mb_board_init, so a "
                                   "`transport.init:` snippet would never run; put the console's "
                                   "set-up in that file (`transport: {init: null}` drops an "
                                   "inherited snippet)")

    if not usable(("flash",)):
        return
    # The runner classes' names and typed args, as data (boards/runner_declarations.py).
    runners = [f["runner"] for f in data["flash"]]
    for key_path, message in flash_entry_problems(data["flash"]):
        add(key_path, message)
    if "qemu" in runners and "qemu" not in data:
        add(("flash",), "the qemu runner needs a `qemu:` section with the machine name")
    if len(set(runners)) != len(runners):
        add(("flash",), f"a runner is listed twice: {', '.join(runners)}")


class _TooManyProblems(Exception):
    """Raised by a check's ``add`` once MAX_PROBLEMS have been found: stop looking."""


def _model_slot_problems(memory: dict[str, Any]) -> list[tuple[tuple, str]]:
    """``placement.model_slots``: each inside a region, 16-byte aligned (a blob's weights are
    read with 16-byte loads), and no two sharing a byte (writing one would damage the other)."""
    regions, problems, spans = memory["regions"], [], []
    for i, slot in enumerate(memory["placement"].get("model_slots", [])):
        path = ("memory", "placement", "model_slots", i)
        region = regions.get(slot["region"])
        if region is None:
            problems.append((path + ("region",), f"model slot {i} is in '{slot['region']}', which "
                             f"is not a region here{_did_you_mean(slot['region'], regions)}; "
                             f"regions: {', '.join(regions)}"))
            continue
        try:
            offset, size = parse_size(slot.get("offset", 0)), parse_size(slot["size"])
        except ValueError as err:
            problems.append((path, f"model slot {i}: {err}"))
            continue
        length, start = parse_size(region["length"]), region["origin"] + offset
        if offset + size > length:
            problems.append((path, f"model slot {i} [{start:#010x}, {start + size:#010x}) ends "
                             f"{offset + size - length:,} bytes past region '{slot['region']}' "
                             f"({length:,} bytes): make it smaller or move it (offset)"))
        if start % 16:
            problems.append((path + ("offset",), f"model slot {i} starts at {start:#010x}, not "
                             "16-byte aligned: blobs must be (their weights are read 16 bytes "
                             "at a time)"))
        for j, (other_start, other_end) in spans:
            if start < other_end and other_start < start + size:
                problems.append((path, f"model slot {i} [{start:#010x}, {start + size:#010x}) "
                                 f"overlaps model slot {j} [{other_start:#010x}, "
                                 f"{other_end:#010x}): give each its own bytes (offset)"))
        spans.append((i, (start, start + size)))
    return problems


def _overlap_problems(resolved: Resolved, usable) -> list[Problem]:
    """Memory regions that share addresses: one problem per region that starts inside an
    earlier one (a sweep in address order, so a file of thousands of regions stays fast)."""
    regions = resolved.data["memory"]["regions"]
    spans = sorted((region["origin"], region["origin"] + parse_size(region["length"]), name)
                   for name, region in regions.items()
                   if usable(("memory", "regions", name)))
    problems = []
    reach: tuple[int, int, str] | None = None  # the span reaching furthest so far
    for start, end, name in spans:
        if reach is not None and start < reach[1] and start < end:
            # Blame the region whose address or size was set last in the extends chain (the
            # one the board's own file touched), and say where the other one is.
            other = reach[2]
            blamed, innocent = sorted((name, other), key=lambda r: _closeness(resolved, r))
            spans_of = {name: (start, end), other: reach[:2]}
            b_start, b_end = spans_of[blamed]
            i_start, i_end = spans_of[innocent]
            elsewhere = resolved.location(("memory", "regions", innocent))
            if elsewhere.file == resolved.location(("memory", "regions", blamed)).file:
                elsewhere = None
            problems.append(Problem(
                resolved.location(("memory", "regions", blamed)), ("memory", "regions", blamed),
                f"region '{blamed}' [{b_start:#010x}, {b_end:#010x}) overlaps region "
                f"'{innocent}' [{i_start:#010x}, {i_end:#010x})"
                + (f" (set at {elsewhere})" if elsewhere else "")))
        if reach is None or end > reach[1]:
            reach = (start, end, name)
    return problems


def _closeness(resolved: Resolved, region: str) -> int:
    """How far up the extends chain a region's address and size were last set: 0 for the board's
    own file, 1 for the board it extends, ..."""
    files = [_real(f) for f in resolved.files]
    path = ("memory", "regions", region)
    return min(files.index(_real(resolved.location(path + (key,)).file))
               for key in ("origin", "length"))


def _source_file(resolved: Resolved, key_path: KeyPath, value: str) -> Path:
    """A board's own C file: relative to the folder of the board file that wrote the key."""
    return (resolved.location(key_path).file.parent / value).resolve()


def _local_sources(resolved: Resolved) -> dict[str, Path]:
    sources = {}
    for kind, key_path in SOURCE_KEYS.items():
        value = value_at(resolved.data, key_path)
        if value is not None and names_a_file(value):
            sources[kind] = _source_file(resolved, key_path, value)
    return sources


@lru_cache(maxsize=64)
def _real(path: Path) -> Path:
    """``path.resolve()``, once per file (a file with thousands of problems asks thousands of
    times)."""
    return path.resolve()


def _with_inheritance(problem: Problem, board_file: Path) -> Problem:
    """A problem set in a file the board extends also names the board's own file, which
    inherited it (the user may never have opened the built-in file the line is in)."""
    if _real(problem.location.file) == _real(board_file):
        return problem
    message = f"{problem.message} (inherited by {board_file})"
    if problem.key_path and problem.key_path[:3] == ("memory", "placement", "model_slots"):
        # A board that shrinks the region under an inherited slot may not want slots at all.
        message += f"; or drop the slots: memory.placement.model_slots: [] in {board_file}"
    return Problem(problem.location, problem.key_path, message)


# Runners that load the ELF into an emulator or run it as a process: RAM-only code is fine there.
_LOADING_RUNNERS = ("qemu", "simavr", "host")


def _boot_problems(data: dict) -> list[tuple[KeyPath, str]]:
    """Can this board's image boot? Code placed in RAM needs a non-volatile region to keep its
    load image in (copied at reset), or an emulator/debugger that loads RAM directly."""
    memory = data["memory"]
    regions = memory["regions"]
    placement = memory["placement"]
    problems: list[tuple[KeyPath, str]] = []
    boot = memory.get("boot")
    if boot is not None and boot not in regions:
        problems.append((("memory", "boot"), f"'{boot}' is not a region here"
                         f"{_did_you_mean(boot, regions)}; regions: {', '.join(regions)}"))
        return problems
    text = placement.get("text")
    if text not in regions or "w" not in regions[text]["access"] or boot is not None:
        return problems
    stores = [name for name, r in regions.items()
              if "w" not in r["access"] and not r.get("external", False)]
    where = ("memory", "placement", "text")
    if len(stores) > 1:
        problems.append((where, f"text (code and the vector table) is placed in RAM region "
                         f"'{text}', so its image must be stored in a non-volatile region and "
                         f"copied there at reset, but this board has several ({', '.join(stores)}):"
                         f" name the one the core boots from with memory.boot"))
    elif not stores and not any(f.get("runner") in _LOADING_RUNNERS for f in data["flash"]):
        problems.append((where, f"text (code and the vector table) is placed in RAM region "
                         f"'{text}' and the board has no non-volatile region to boot from (no "
                         f"r/rx region that is not external): the image would be gone at the "
                         f"first reset. Place text in the board's flash, add the flash region "
                         f"(its load image is then copied to '{text}' at reset), or name the "
                         f"region the boot ROM loads from with memory.boot"))
    return problems


def check_board_file(path: Path) -> tuple[Board | None, list[Problem]]:
    """Resolve and validate one file: the board, or every problem found (the schema's and the
    semantic checks' together, so one run of `boards validate` shows all that is wrong)."""
    path = Path(path)
    resolved = resolve(path)
    findings = _schema_findings(resolved.data, board_schema(), resolved.location)
    problems = [problem for problem, _ in findings]
    problems += _semantic_problems(resolved, path.stem, usable=_usable_outside(
        {subject for _, subject in findings}), limit=MAX_PROBLEMS - len(problems))
    if problems:
        return None, [_with_inheritance(p, path) for p in problems]
    return Board(data=resolved.data, files=resolved.files,
                 local_sources=_local_sources(resolved)), []


def _usable_outside(broken: set[KeyPath]):
    """``usable(key_path, whole=True)`` for the semantic checks: False when a schema problem lies
    at ``key_path`` or above it, or (``whole``) anywhere inside it: the value there cannot be
    trusted to have the shape the checks read."""
    inside = {b[:n] for b in broken for n in range(len(b) + 1)}  # every path above a problem

    def usable(key_path: KeyPath, whole: bool = True) -> bool:
        key_path = tuple(key_path)
        if () in broken or under(key_path, broken):
            return False
        return not (whole and key_path in inside)
    return usable


def scan_boards() -> tuple[list[Board], list[str]]:
    """Every board on the search path that is valid, and one line per file that is not (its
    first problem), so one broken file in a folder does not hide the others."""
    boards, errors = [], []
    for path in available_boards().values():
        try:
            board, problems = check_board_file(path)
        except BoardError as exc:
            errors.append(str(exc).splitlines()[0])
            continue
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            errors.append(f"{problems[0]}{more}; "
                          f"`microbuild boards validate {shlex.quote(str(path))}` lists all")
        else:
            boards.append(board)
    return boards, errors


def list_boards() -> list[Board]:
    """Every board on the search path, resolved; a broken user file raises BoardError naming it."""
    return [load_board_file(path) for path in available_boards().values()]


def load_board_file(path: Path) -> Board:
    board, problems = check_board_file(path)
    if problems:
        raise BoardError(f"board file {path} is not valid:\n" + "\n".join(f"  {p}" for p in problems))
    return board


def load_board(name: str) -> Board:
    """The board called ``name`` from the search path, resolved and validated."""
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        return load_board_file(Path(name))
    path = find_board_file(name)
    if path is None:
        known = available_boards()
        raise BoardError(f"no board named '{name}'{_did_you_mean(name, known)}. "
                         f"Boards are looked up in: {', '.join(str(p) for p in search_path())}. "
                         f"`microbuild boards list` shows them; `microbuild boards new {name} --from <board>` "
                         f"starts a new one")
    return load_board_file(path)


__all__ = ["ENV_PATH", "available_boards", "find_board_file", "board_schema", "builtin_boards_dir", "check_board_file",
           "did_you_mean", "list_boards", "load_board", "load_board_file", "scan_boards", "schema_problems",
           "search_path", "format_key_path"]

did_you_mean = _did_you_mean
