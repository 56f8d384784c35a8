"""Which executor a project uses, and the runtime/ files it and the board need copied in."""

from __future__ import annotations

import shlex
from pathlib import Path

from microbuild.boards import Board
from microbuild.errors import BuildError
from microbuild.firmware import board_files, image_steps
from microbuild.firmware.executors import EXECUTORS, Executor
from microbuild.paths import runtime_dir
from microbuild.project.files import ProjectError


# Executors that exist (or are being written) but that projects cannot use yet, and why.
NOT_YET: dict[str, str] = {}


def get_executor(name: str) -> Executor:
    from microbuild.project import table

    if name == table.TABLE:
        # Completed for the board and models by table.table_executor once they are compiled.
        return table.PLACEHOLDER
    if name in EXECUTORS:
        return EXECUTORS[name]
    if name in NOT_YET:
        raise ProjectError(f"--executor {name}: {NOT_YET[name]}; generate with --executor aot")
    raise ProjectError(f"unknown executor '{name}'; choose one of: {', '.join(EXECUTORS)}")


def compiled_runtime_sources(board: Board, family: str | None, executor: Executor) -> list[str]:
    """The runtime/ sources a bare-metal project compiles, besides its own src/: start-up code,
    drivers and print helpers, every kernel, and the executor's own sources (not its main,
    which lives on as src/main.c)."""
    headers = set(boot_header_sources(board))  # assembled into a header, not linked as code
    return [f for f in runtime_files(board, family, executor)
            if f.endswith((".c", ".S")) and f != executor.main and f not in headers]


def runtime_files(board: Board, family: str | None, executor: Executor) -> list[str]:
    """Every runtime/ file a project for ``board`` copies (relative to runtime/)."""
    files = board_files.runtime_files(board, family, executor.sources) + boot_header_sources(board)
    if executor.name == "table":
        # A table firmware's kernels are fixed when it is built (its kernel set, listed among
        # the executor's sources): the other kernel sources would be compiled for nothing.
        files = [f for f in files if not (f.startswith("kernels/") and f.endswith(".c"))
                 or f in executor.sources]
    return sorted(set(files))


def boot_header_c_files(board: Board, setup) -> dict[str, str]:
    """{"mb_<step>.c": text} for the board's boot headers (RP2040 boot2 with its CRC), assembled
    now with the board's toolchain (``setup``), as microbuild's own build does after the compile:
    for projects whose build runs no microbuild (make)."""
    import subprocess
    import tempfile

    files = {}
    for step in [] if board.is_host else image_steps.steps(board):
        if not step.header_source:
            continue
        with tempfile.TemporaryDirectory() as folder:
            obj, raw = Path(folder) / "header.o", Path(folder) / "header.raw"
            commands = [[setup.cc, *setup.asflags, "-c", str(runtime_dir() / step.header_source),
                         "-o", str(obj)],
                        [setup.objcopy, "-O", "binary", "-j", ".text", str(obj), str(raw)]]
            for command in commands:
                done = subprocess.run(command, capture_output=True, text=True)
                if done.returncode != 0:
                    raise BuildError(f"assembling {step.header_source} for {board.name} (image "
                                     f"step {step.name}) failed: {shlex.join(command)}\n"
                                     f"{done.stdout}{done.stderr}")
            files[f"mb_{step.name}.c"] = step.header_c(raw.read_bytes())
    return files


def boot_header_sources(board: Board) -> list[str]:
    """The runtime/ sources of the board's boot headers (RP2040 boot2), which a project's build
    assembles into the bytes its image starts with."""
    if board.is_host:
        return []
    return [step.header_source for step in image_steps.steps(board) if step.header_source]
