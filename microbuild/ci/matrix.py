"""Which cells a `microbuild ci` run builds: boards x the toolchains each lists x models."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Sequence

from microbuild.boards import available_boards, load_board
from microbuild.compiler.c_names import model_prefix
from microbuild.ci.cells import Cell
from microbuild.errors import MicrobuildError, ModelError, ToolchainError

EXECUTORS = ("aot",)


def select_boards(patterns: str) -> list[str]:
    """Board names matching ``patterns``: "all", or comma-separated names/globs (mps2-*)."""
    names = sorted(available_boards())
    if patterns.strip() in ("all", "*", ""):
        return names
    chosen: list[str] = []
    for pattern in (p.strip() for p in patterns.split(",") if p.strip()):
        matches = fnmatch.filter(names, pattern)
        if not matches:
            raise MicrobuildError(f"--boards {pattern}: no board matches; boards: {', '.join(names)}")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def plan_cells(boards: Sequence[str], models: Sequence[str | Path],
               toolchains: Sequence[str] | None = None,
               executors: Sequence[str] = EXECUTORS) -> list[Cell]:
    """Every (board, toolchain, model, executor) cell. A toolchain the user asked for that a board
    does not list becomes a not-applicable cell (said, not hidden); a toolchain a board lists but
    this machine lacks is a failed cell whose message names the package to install."""
    from microbuild.firmware.toolchains import toolchain_setup

    paths = []
    for model in models:
        path = Path(model)
        if not path.is_file():
            raise ModelError(f"{model}: no such model file")
        paths.append(path.resolve())
    if not paths:
        raise MicrobuildError("no models: pass --models FILE.tflite ...")
    for executor in executors:
        if executor not in EXECUTORS:
            raise MicrobuildError(f"executor '{executor}' is not available; use: {', '.join(EXECUTORS)}")

    cells = []
    for name in boards:
        board = load_board(name)
        listed = [tc.family for tc in board.toolchains]
        wanted = list(toolchains) if toolchains else listed
        for family in wanted:
            problem, status = "", "pending"
            if family not in listed:
                status = "not-applicable"
                problem = f"board {name} does not list toolchain {family} (it lists {', '.join(listed)})"
            else:
                try:
                    toolchain_setup(board, family)
                except ToolchainError as err:
                    status, problem = "failed", str(err)
            for path in paths:
                for executor in executors:
                    cells.append(Cell(board=name, toolchain=family, model=model_prefix(path),
                                      executor=executor, model_path=str(path), status=status,
                                      message=problem))
    return cells
