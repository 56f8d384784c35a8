"""``extends:``: a board file over the board it names, merged key by key, remembering which file
and line set each key so that every later problem can point at the line that caused it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from microbuild.boards.search_path import available_boards, find_board_file
from microbuild.boards.source import (BoardSource, KeyPath, Location, ReplaceMapping,
                                      format_key_path, plain, read_board_source)
from microbuild.errors import BoardError
from microbuild.errors import did_you_mean as _did_you_mean


@dataclass
class Resolved:
    data: dict[str, Any]
    origins: dict[KeyPath, Location]
    files: list[Path]

    def location(self, key_path: KeyPath) -> Location:
        path = tuple(key_path)
        while path not in self.origins and path:
            path = path[:-1]
        return self.origins.get(path, Location(self.files[0], 1))


def _origins_of(source: BoardSource) -> dict[KeyPath, Location]:
    return {path: Location(source.path, line) for path, line in source.lines.items()}


def _merge(base: Resolved, child: BoardSource, base_name: str) -> Resolved:
    """``child`` over ``base``: mappings merge key by key, anything else (lists included) replaces
    the inherited value; ``key: null`` removes the inherited key and ``key: !replace {...}`` takes
    the mapping as written instead of merging it."""
    data = copy.deepcopy(base.data)
    # Subtrees whose inherited origins no longer hold (replaced or removed), and removed keys.
    # Both are applied once at the end: per key, the merge would be quadratic in the file size.
    replaced: set[KeyPath] = set()
    removed: set[KeyPath] = set()

    def merge_into(target: dict, overlay: dict, path: KeyPath) -> None:
        for key, value in overlay.items():
            key_path = path + (key,)
            if value is None:
                if key not in target:
                    where = child.location(key_path)
                    raise BoardError(
                        f"{where}: {format_key_path(key_path)}: null removes an inherited key, but "
                        f"'{base_name}' ({base.files[0]}) has no such key"
                        f"{_did_you_mean(str(key), target)}")
                del target[key]
                replaced.add(key_path)
                removed.add(key_path)
                continue
            if (isinstance(value, dict) and not isinstance(value, ReplaceMapping)
                    and isinstance(target.get(key), dict)):
                merge_into(target[key], value, key_path)
            else:
                # A replaced value forgets where the old one's parts came from.
                replaced.add(key_path)
                target[key] = copy.deepcopy(value)

    merge_into(data, child.data, ())
    origins = {p: where for p, where in base.origins.items() if not under(p, replaced)}
    origins.update({p: Location(child.path, line) for p, line in child.lines.items()
                    if p not in removed})
    origins[()] = Location(child.path, 1)
    return Resolved(data, origins, [child.path] + base.files)


def under(key_path: KeyPath, subtrees: set[KeyPath]) -> bool:
    """Is ``key_path`` one of ``subtrees`` or inside one of them?"""
    return any(key_path[:n] in subtrees for n in range(1, len(key_path) + 1))


def resolve(path: Path, chain: tuple[Path, ...] = ()) -> Resolved:
    source = read_board_source(path)
    base_name = source.data.get("extends")
    if base_name is None:
        return Resolved(plain(source.data), _origins_of(source), [source.path])
    where = source.location(("extends",))
    if not isinstance(base_name, str):
        raise BoardError(f"{where}: extends: must be a board name (a string), not {base_name!r}")
    base_path = find_board_file(base_name, exclude=path)
    if base_path is None:
        raise BoardError(f"{where}: extends: no board named '{base_name}' on the search path"
                         f"{_did_you_mean(base_name, available_boards())}; "
                         f"`microbuild boards list` shows the boards there are")
    if base_path.resolve() in [p.resolve() for p in chain + (path,)]:
        cycle = " -> ".join(str(p) for p in chain + (path, base_path))
        raise BoardError(f"{where}: extends: inheritance cycle: {cycle}")
    base = resolve(base_path, chain + (path,))
    resolved = _merge(base, source, base_name)
    resolved.data = plain(resolved.data)
    resolved.data.pop("extends", None)
    return resolved
