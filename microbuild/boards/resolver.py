"""The one way a board given by a user becomes a :class:`Board`: a Board as it is, a name on the
search path, or the path of a YAML file; read once and reused while its files are unchanged.

A build names its board many times (the API, then the SCons tool once per model, runtime and
firmware of a matrix), and resolving a board reads YAML with line numbers, merges ``extends:`` and
validates against the schema: the cache makes the repeats free. A cached board is used again
only while every file it was read from (its own and those it extends) keeps its size and
modification time, and while the search path (``MICROBUILD_BOARDS``, the working folder) is
the same, so an edited board file is always read anew.
"""

from __future__ import annotations

import os
from pathlib import Path

from microbuild.boards.board import Board
from microbuild.boards.loader import find_board_file, load_board, load_board_file, search_path

_Signature = tuple[tuple[str, int, int], ...]
_cache: dict[tuple[Path, tuple[Path, ...]], tuple[_Signature, Board]] = {}


def _signature(files: list[Path]) -> _Signature | None:
    try:
        return tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    except OSError:
        return None


def _is_yaml_path(board: str) -> bool:
    """True when ``board`` is a YAML file's path rather than a board's name (as load_board says)."""
    return board.endswith((".yaml", ".yml")) or os.sep in board


def resolve_board(board: str | Path | Board) -> Board:
    """A board given as a Board, a name on the search path, or a path to its YAML file."""
    if isinstance(board, Board):
        return board
    text = str(board)
    path = Path(text) if _is_yaml_path(text) else find_board_file(text)
    if path is None:
        return load_board(text)  # raises the error naming the search path, with did-you-mean
    key = (path.resolve(), tuple(search_path()))
    cached = _cache.get(key)
    if cached is not None and cached[0] == _signature(cached[1].files):
        return cached[1]
    resolved = load_board_file(path)
    signature = _signature(resolved.files)
    if signature is not None:
        _cache[key] = (signature, resolved)
    return resolved
