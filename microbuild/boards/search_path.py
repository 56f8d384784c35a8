"""Where board files are looked up: the search path, lowest priority first, is the built-in
``board_defs/``, each folder in ``MICROBUILD_BOARDS_PATH`` (in order), then ``./boards/``. A later
folder's file shadows an earlier one of the same name, so a user can replace a built-in board, or
extend it under the same name (``find_board_file``'s ``exclude``).
"""

from __future__ import annotations

import os
from pathlib import Path

from microbuild.paths import board_defs_dir

ENV_PATH = "MICROBUILD_BOARDS_PATH"


def builtin_boards_dir() -> Path:
    """``board_defs/``: beside the package in a checkout, inside it in a wheel."""
    return board_defs_dir()


def search_path() -> list[Path]:
    """Folders searched for ``<name>.yaml``, lowest priority first."""
    folders = [builtin_boards_dir()]
    for entry in os.environ.get(ENV_PATH, "").split(os.pathsep):
        if entry.strip():
            folders.append(Path(entry).expanduser())
    folders.append(Path.cwd() / "boards")
    return folders


def _board_files() -> list[Path]:
    """Every board file on the search path, lowest priority first (shadowed ones included)."""
    files = []
    for folder in search_path():
        if folder.is_dir():
            files.extend(sorted(folder.glob("*.yaml")))
    return files


def available_boards() -> dict[str, Path]:
    """Board name -> the file that wins for it."""
    winners: dict[str, Path] = {}
    for path in _board_files():
        winners[path.stem] = path
    return dict(sorted(winners.items()))


def find_board_file(name: str, exclude: Path | None = None) -> Path | None:
    """The highest-priority file for ``name``; with ``exclude``, the next one below that file
    (so ``boards/stm32f746.yaml`` can say ``extends: stm32f746`` and mean the built-in one)."""
    candidates = [p for p in _board_files() if p.stem == name]
    if exclude is not None:
        exclude = exclude.resolve()
        resolved = [p.resolve() for p in candidates]
        if exclude in resolved:
            candidates = candidates[:resolved.index(exclude)]
    return candidates[-1] if candidates else None
