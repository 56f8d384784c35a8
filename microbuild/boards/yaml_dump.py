"""A resolved board written back as YAML (addresses in hex): what `boards show` prints and what a
generated project carries as its board file."""

from __future__ import annotations

from typing import Any

import yaml

from microbuild.boards.board import Board


class _HexInt(int):
    """An int that ``board_yaml`` writes in hex (addresses, USB ids)."""


yaml.SafeDumper.add_representer(
    _HexInt, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:int", f"{int(value):#x}"))

_HEX_KEYS = {"origin", "base", "vid", "pid", "address"}


def _with_hex(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _with_hex(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_hex(v, key) for v in value]
    if key in _HEX_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return _HexInt(value)
    return value


def board_yaml(board: Board) -> str:
    """The resolved definition as YAML (addresses in hex), as ``boards show`` prints it."""
    header = f"# {board.name}: resolved from " + " <- ".join(str(p) for p in board.files) + "\n"
    return header + yaml.safe_dump(_with_hex(board.data), sort_keys=False, width=100)
