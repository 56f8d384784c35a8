"""Reading one board YAML file while remembering where every key came from.

Errors about boards must say ``file:line: key.path: message``. PyYAML's ``safe_load`` forgets line
numbers, so the file is also composed into YAML nodes and walked in parallel to record the line of
every key path. Duplicate keys, which PyYAML silently collapses, are reported here too.

One tag is understood beyond plain YAML: ``!replace`` on a mapping (``memory: !replace {...}``)
tells ``extends:`` to take that mapping as it is instead of merging it into the inherited one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from microbuild.errors import BoardError

KeyPath = tuple  # of str keys and int list indices

REPLACE_TAG = "!replace"


class ReplaceMapping(dict):
    """A mapping written with ``!replace``: it replaces the inherited mapping wholesale."""


class _BoardLoader(yaml.SafeLoader):
    """The safe loader plus ``!replace`` (nothing else: board files stay plain data)."""


def _construct_replace(loader: _BoardLoader, node: yaml.Node) -> ReplaceMapping:
    if not isinstance(node, yaml.MappingNode):
        raise yaml.constructor.ConstructorError(
            None, None, f"{REPLACE_TAG} goes on a mapping (key: {REPLACE_TAG} {{...}}), "
                        f"not on a {node.id}", node.start_mark)
    return ReplaceMapping(loader.construct_mapping(node, deep=True))


_BoardLoader.add_constructor(REPLACE_TAG, _construct_replace)


def plain(value: Any) -> Any:
    """``value`` with every ReplaceMapping turned back into a dict (once extends: is resolved the
    marker has done its work, and YAML dumpers refuse dict subclasses)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def format_key_path(path: KeyPath) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


@dataclass(frozen=True)
class Location:
    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a board definition, printed as ``file:line: key.path: message``."""

    location: Location
    key_path: KeyPath
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {format_key_path(self.key_path)}: {self.message}"


@dataclass
class BoardSource:
    """One YAML file as written: its data and the line of each key path in it."""

    path: Path
    data: dict[str, Any]
    lines: dict[KeyPath, int]

    def location(self, key_path: KeyPath) -> Location:
        return Location(self.path, self.lines.get(tuple(key_path), 1))


def _walk(node: yaml.Node, path: KeyPath, lines: dict, problems: list, file: Path) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                problems.append(Problem(Location(file, line), path + (key,),
                                        f"duplicate key (first set on line {seen[key]}); remove one"))
            seen[key] = line
            lines[path + (key,)] = line
            _walk(value_node, path + (key,), lines, problems, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            _walk(item, path + (i,), lines, problems, file)


def read_board_source(path: Path) -> BoardSource:
    """Parse one board file; raise BoardError with file:line for YAML syntax errors."""
    return read_yaml_source(path)


def read_yaml_source(path: Path, kind: str = "board file", error: type = BoardError,
                     empty_ok: bool = False) -> BoardSource:
    """Parse one YAML file of mappings (a board file, or another ``kind`` of file microbuild
    reads the same way, raising ``error``), remembering the line of every key path. An empty file
    is an error, or with ``empty_ok`` an empty mapping."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such {kind}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read {kind}: {exc}") from None
    try:
        data = yaml.load(text, Loader=_BoardLoader)  # noqa: S506 (a SafeLoader + !replace)
        node = yaml.compose(text, Loader=_BoardLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = exc.problem or str(exc)
        context = f" ({exc.context})" if exc.context else ""
        raise error(f"{path}:{line}: YAML syntax error: {what}{context}") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: YAML error: {exc}") from None
    if data is None and empty_ok:
        return BoardSource(path=path, data={}, lines={(): 1})
    if data is None:
        raise error(f"{path}:1: the file is empty; a board needs at least `name:` and `extends:` or a full definition")
    if not isinstance(data, dict):
        raise error(f"{path}:1: a {kind} must be a mapping of keys (name:, cpu:, ...), not a {type(data).__name__}"
                    if kind == "board file" else
                    f"{path}:1: a {kind} must be a mapping of keys, not a {type(data).__name__}")
    lines: dict[KeyPath, int] = {(): 1}
    problems: list[Problem] = []
    _walk(node, (), lines, problems, path)
    if problems:
        raise error("\n".join(str(p) for p in problems))
    return BoardSource(path=path, data=data, lines=lines)
