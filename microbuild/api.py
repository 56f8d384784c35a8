"""The public Python API. The CLI is a thin layer over these functions.

    >>> import microbuild.api as mb
    >>> board = mb.get_board("mps2-an500")
    >>> board.region_for("workspace").length
    4194304

The boards room is imported at the top; the functions import the rooms they drive (firmware,
device, ci, tuning) when called, on purpose: the CLI imports this module to start, and those load
SCons, numpy, pyelftools and every operator module.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from microbuild.boards import scan_boards as _scan_boards
# board_yaml and list_boards are part of this API as the boards room defines them.
from microbuild.boards import (Board, Problem, board_yaml, check_board_file,  # noqa: F401
                               list_boards, load_board, load_board_file, resolve_board)
from microbuild.errors import BoardError, DeviceError, MicrobuildError


def get_board(name: str) -> Board:
    """A board by name from the search path (or by path to a .yaml file), resolved and validated."""
    return load_board(name)


def scan_boards() -> tuple[list[Board], list[str]]:
    """The valid boards on the search path, and one error line per board file that is not valid
    (what `boards list` shows: one broken file in a folder does not hide the others)."""
    return _scan_boards()


def validate_board_files(paths: list[Path]) -> list[Problem | str]:
    """Every problem in the given files (empty when all are valid). Problems that stop a file
    from being read at all (YAML syntax, a missing base) come back as strings."""
    problems: list[Problem | str] = []
    for path in paths:
        try:
            _, found = check_board_file(Path(path))
            problems.extend(found)
        except BoardError as exc:
            problems.append(str(exc))
    return problems


_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def new_board(name: str, base: str, directory: Path = Path("boards"), force: bool = False) -> Path:
    """Write ``<directory>/<name>.yaml`` extending ``base``; it validates as written."""
    if not _NAME.match(name):
        raise BoardError(f"'{name}' cannot be a board name: use lower-case letters, digits, '-', '_' or '.', "
                         f"starting with a letter or digit")
    base_board = get_board(base)
    directory = Path(directory)
    path = directory / f"{name}.yaml"
    if path.exists() and not force:
        raise BoardError(f"{path} already exists; edit it, or pass --force to overwrite it")
    regions = "\n".join(
        f"#     {r.name}: {{origin: {r.origin:#010x}, length: {r.length}, access: {r.access}}}"
        for r in base_board.regions.values())
    text = f"""\
# {name}: a board based on {base}. Everything not set here is inherited from {base}
# (`microbuild boards show {base}` prints it); mappings merge key by key, lists are replaced.
# Override what differs on your board, for example its memory map:
#
# memory:
#   regions:
{regions or "#     ram: {origin: 0x20000000, length: 256K, access: rwx}"}
#
# `microbuild boards validate {shlex.quote(str(path))}` checks the file; `microbuild boards show {name}` shows the result.
name: {name}
extends: {base}
title: "{name} (based on {base_board.title})"
"""
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    try:
        load_board_file(path)
    except MicrobuildError:
        path.unlink()
        raise
    return path


# --- firmware ------------------------------------------------------------------------------------

def build_firmware(board: str | Path | Board, models: list[str | Path], out_dir: str | Path,
                   **options: Any):
    """Build a standalone firmware; see microbuild.firmware.build.build_firmware for options."""
    from microbuild.firmware.build import build_firmware as _build

    return _build(board, models, out_dir, **options)


def measure_float_reorder(board, model: str | Path, **options: Any):
    """How far the kernels ``allow_float_reorder`` lets a build choose (they add float sums in
    another order than TFLM) move ``model``'s outputs, measured on the board or an emulated one
    with the same core: a ReorderReport (``max_abs``, ``max_ulp``, ``max_relative``, ticks).
    Options: tuning, variants, seed, ops, toolchain, timeout."""
    from microbuild.tuning.float_reorder import measure_float_reorder as _measure

    return _measure(board, model, **options)


def run_firmware(build, runner: str | None = None, timeout: float = 300.0):
    """Boot a standalone (AOT) firmware on its emulated board or as a host process, wait for it
    to finish, and return its outputs and timer ticks (an AotResult)."""
    from microbuild.device.aot_run import run_aot_firmware

    return run_aot_firmware(build, runner=runner, timeout=timeout)


def run_app(build, runner: str | None = None, timeout: float = 300.0):
    """Boot a firmware built with your own main() (executor "app") on its emulated board or as
    a host process, wait for it to end, and return what it printed and its exit status (a
    CompletedRun: ``.console``, ``.status``)."""
    from microbuild.device.aot_run import run_to_exit

    return run_to_exit(build, runner=runner, timeout=timeout)


def connect(board, firmware, runner: str | None = None, port: str | None = None,
            timeout: float = 5.0, flash: bool = True, on_log=None, description=None):
    """Boot or flash an RPC firmware (``build_firmware(..., executor="rpc")``) and return a
    connected Device: ``dev.run(model, x)``, ``dev.profile(model, x)``, ``dev.close()``."""
    from microbuild.device.device import connect as _connect

    return _connect(board, firmware, runner=runner, port=port, timeout=timeout, flash=flash,
                    on_log=on_log, description=description)


def flash_runner(board, runner: str | None = None, port: str | None = None):
    """The FlashToolRunner ``runner`` (default: the board's first) of a real board; a
    DeviceError for the host and emulated boards, which have nothing to flash."""
    from microbuild.device.runners import FlashToolRunner, runner_for

    board = resolve_board(board)
    options = {"args": {"port": port}} if port else {}
    chosen = runner_for(board, runner, **options)
    if not isinstance(chosen, FlashToolRunner):
        what = "the host" if board.is_host else f"emulated ({chosen.name})"
        raise DeviceError(f"board '{board.name}' is {what}: there is nothing to flash; "
                          f"`microbuild run --board {board.name} --model M.tflite` starts the "
                          "firmware and talks to it")
    return chosen


def flash_firmware(board, firmware, runner: str | None = None, port: str | None = None,
                   progress=None) -> str:
    """Program a real board with ``firmware`` (a FirmwareBuild or the path of its .elf/.bin/.hex)
    using ``runner`` (default: the board's first flash runner); returns the runner's name.
    Raises FlashError with the tool's own output when the tool fails (no probe, ...)."""
    from microbuild.firmware.build import FirmwareBuild
    from microbuild.device.runners import FirmwareImage

    chosen = flash_runner(board, runner, port)
    board = chosen.board
    image = (FirmwareImage.from_build(firmware) if isinstance(firmware, FirmwareBuild)
             else FirmwareImage.from_path(firmware))
    if progress:
        progress(f"flashing {image.elf.name} to {board.name} with {chosen.name}...")
    chosen.flash(image)
    return chosen.name


def build_table_firmware(board: str | Path | Board, kernels_for: list[str | Path],
                         out_dir: str | Path, toolchain: str | None = None):
    """A table-executor firmware linking the kernels ``kernels_for`` call (docs/model-blob.md);
    see microbuild.firmware.table."""
    from microbuild.firmware.table import build_table_firmware as _build

    return _build(board, kernels_for, out_dir, toolchain)


def pack(firmware: str | Path, model: str | Path, out: str | Path, sequence: int = 0):
    """Pack ``model`` as a blob for a table-executor ``firmware``, refusing what it lacks;
    ``sequence`` orders blobs in a board's model slots (the highest valid one runs)."""
    from microbuild.firmware.table import pack_for_firmware

    return pack_for_firmware(firmware, model, out, sequence)


def firmware_note(elf: str | Path):
    """What a firmware says about itself (its .note.microbuild): board, build id, models,
    executor, toolchain, as a FirmwareNote; None for an ELF without one."""
    from microbuild.firmware.note import read_note

    return read_note(elf)


# --- validation ----------------------------------------------------------------------------------

def validate(board, model: str | Path, data: str | Path, **options: Any):
    """Run the dataset ``data`` through ``model`` as deployed on ``board`` (over RPC) and through
    TFLM on the host; returns a ValidationReport (``.to_dict()`` is `validate --json`). Options:
    labels, float_model, limit, seed, preprocess, max_samples, firmware, device, progress, ...;
    see microbuild.validate.run.validate."""
    from microbuild.validate.run import validate as _validate

    return _validate(board, model, data, **options)


def quantize(float_model: str | Path, data: str | Path, out: str | Path, **options: Any):
    """Quantize a float .tflite to a full-integer one calibrated on ``data`` with
    ai-edge-quantizer (the [quantize] extra); returns a QuantizeResult (what it did per op).
    Options: int16_activations, per_tensor, limit, seed, preprocess."""
    from microbuild.quantize import quantize_model

    return quantize_model(float_model, data, out, **options)


# --- ci --------------------------------------------------------------------------------------------

def plan_ci(boards: str, models: list[str | Path], toolchains: list[str] | None = None):
    """The cells of a CI matrix: boards ("all" or globs) x their toolchains x models."""
    from microbuild.ci.matrix import plan_cells, select_boards

    return plan_cells(select_boards(boards), models, toolchains)


def run_ci(cells, out_dir: str | Path, jobs: int | None = None, cache: str | Path | None = "",
           emulate: bool = False, progress=None, tuning: str | Path | None = None,
           variants: dict[str, str] | None = None):
    """Build the cells (one SCons run, shared runtime per board and toolchain, CacheDir ``cache``:
    "" for the default, None for none); with ``emulate``, run emulated cells against TFLM."""
    from microbuild.ci.run import build_matrix, default_cache_dir, emulate_cells

    cache_dir = default_cache_dir() if cache == "" else (Path(cache) if cache else None)
    cells = build_matrix(cells, Path(out_dir), jobs=jobs, cache=cache_dir, progress=progress,
                         tuning=tuning, variants=variants)
    if emulate:
        cells = emulate_cells(cells, Path(out_dir), jobs=jobs, progress=progress)
    return cells


def emit_ci_workflow(cells, kind: str, path: str | Path | None = None,
                     baseline: str | None = None, max_growth: str | None = None,
                     tuning: str | Path | None = None,
                     variants: dict[str, str] | None = None, install: str | None = None,
                     emulate: bool = False) -> Path:
    """Write a GitHub Actions or GitLab CI workflow: a matrix job with an entry per cell and a
    merge job. ``tuning`` (a log path in the repository) and ``variants`` reach every cell's
    build; ``install``: where the jobs get microbuild (see microbuild.ci.emit.install_source);
    ``emulate``: cells of emulated boards and the host also run and are compared with TFLM."""
    from microbuild.ci import emit
    from microbuild.tuning import TuningLog

    if tuning:
        TuningLog.load(tuning)  # a missing or malformed log is an error now, not in every job
    kernels = (["--tuning", str(tuning)] if tuning else []) + [
        word for opcode, name in (variants or {}).items() for word in ("--variant",
                                                                         f"{opcode}={name}")]
    write = emit.github_actions if kind == "github-actions" else emit.gitlab
    text = write(cells, baseline=baseline, max_growth=max_growth, kernels=kernels,
                 install=install, emulate=emulate)
    target = Path(path or (".github/workflows/microbuild-ci.yml" if kind == "github-actions"
                           else ".gitlab-ci.yml"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return target
