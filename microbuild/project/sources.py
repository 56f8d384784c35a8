"""The sources every project has: the runtime copy, the board's YAML and own C files, and the
user's src/main.c."""

from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path
from typing import Sequence

from microbuild.boards import Board, board_yaml
from microbuild.boards.drivers import SOURCE_KEYS
from microbuild.firmware import board_files
from microbuild.paths import runtime_dir
from microbuild.project.executors import runtime_files
from microbuild.project.files import (
    APP_MAIN,
    BOARD_DIR,
    RUNTIME_DIR,
    RUNTIME_LICENCE_FILES,
    ProjectFiles,
)
from microbuild.project.templates import templates_dir


def add_runtime(files: ProjectFiles, rels: Sequence[str], link_runtime: bool,
                folder: str = RUNTIME_DIR) -> str:
    """Copy the runtime files ``rels`` into ``folder`` (or, with ``link_runtime``, point at the
    installation's runtime/ instead); returns the runtime folder as the build files name it:
    relative to the project, or absolute for a linked runtime."""
    root = runtime_dir()
    if link_runtime:
        return str(root)
    # The licence travels with the copied sources: a project is redistributable as it is.
    for rel in [*RUNTIME_LICENCE_FILES, *rels]:
        files.add(f"{folder}/{rel}", (root / rel).read_bytes())
    return folder


BOARD_SOURCES_DIR = "src"  # the board's own C files, under board/ (beside its YAML)


def board_own_files(board: Board) -> dict[str, Path]:
    """The board's own C files (drivers, init code) and the headers they include, by where a
    project keeps them relative to board/: ``src/`` plus each file's path below the folder that
    holds them all (so their ``#include "x.h"`` still find each other)."""
    own = board_files.local_sources(board) + board_files.local_headers(board)
    if not own:
        return {}
    root = Path(os.path.commonpath([str(p.parent) for p in own]))
    return {f"{BOARD_SOURCES_DIR}/{p.relative_to(root).as_posix()}": p for p in own}


def add_board_files(files: ProjectFiles, board: Board) -> list[str]:
    """board/<name>.yaml and the board's own C files beside it (board/src/...); returns those
    files' C sources relative to the project, which a project compiles besides the runtime."""
    files.add(f"{BOARD_DIR}/{board.name}.yaml", board_yaml_text(board))
    own = board_own_files(board)
    for rel, path in own.items():
        files.add(f"{BOARD_DIR}/{rel}", path.read_bytes())
    return [f"{BOARD_DIR}/{rel}" for rel, path in own.items() if rel.endswith(".c")]


def board_yaml_text(board: Board) -> str:
    """The board's definition with `extends:` resolved, so the project needs no other board file
    (as `microbuild boards show` prints it, with a header that names no local paths). The board's
    own C files are named where the project keeps them (board/src/..., see add_board_files)."""
    own = {path: rel for rel, path in board_own_files(board).items()}
    if own:
        data = copy.deepcopy(board.data)
        for kind, path in board.local_sources.items():
            *parents, key = SOURCE_KEYS[kind]
            target = data
            for parent in parents:
                target = target[parent]
            target[key] = own[path]
        board = dataclasses.replace(board, data=data)
    body = board_yaml(board).split("\n", 1)[1]
    return (f"# Board '{board.name}' ({board.title}) with everything it extends merged in, "
            f"written by\n# microbuild generate. Edit it here: builds read this file (compiler "
            f"flags, memory map,\n# drivers); regenerating from it (see README.md) keeps your "
            f"changes.\n{body}")


def app_main(spec) -> str:
    """src/main.c of a bare-metal project: an application skeleton for the models (AOT), or the
    executor's main, now the user's (RPC)."""
    executor = spec.executor
    if executor.skeleton:
        from microbuild.project.app_skeleton import app_main_c

        return app_main_c(spec.board.name, [spec.compiled[p].summary() for p in spec.models])
    text = (runtime_dir() / executor.main).read_text()
    return (f"/* Your application. `microbuild generate` wrote this file once, as a copy of\n"
            f" * microbuild's {executor.name} executor (runtime/{executor.main} in a project with "
            f"its\n * runtime copied in), and never overwrites it: change it as you like. */\n"
            f"{text}")


def add_bare_metal_files(spec, files: ProjectFiles) -> tuple[str, list[str]]:
    """What every bare-metal project (platformio, scons, make) starts with: the board's files,
    the runtime/ files the board and the executor need, src/main.c (the user's) and .gitignore.
    Returns the runtime folder as the build files name it, and the board's own C sources."""
    own_sources = add_board_files(files, spec.board)
    runtime = add_runtime(files, runtime_files(spec.board, spec.toolchain, spec.executor),
                          spec.link_runtime)
    files.add_user(APP_MAIN, app_main(spec))
    files.add(".gitignore", (templates_dir() / "common" / "gitignore").read_text())
    return runtime, own_sources
