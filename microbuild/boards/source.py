"""Reading one board YAML file while remembering where every key came from.

Errors about boards must say ``file:line: key.path: message``. PyYAML's ``safe_load`` forgets line
numbers, so the file is also composed into YAML nodes and walked in parallel to record the line of
every key path. Duplicate keys, which PyYAML silently collapses, are reported here too.

One tag is understood beyond plain YAML: ``!replace`` on a mapping (``memory: !replace {...}``)
tells ``extends:`` to take that mapping as it is instead of merging it into the inherited one.

Every YAML file microbuild reads (boards, ``microbuild.yaml`` manifests) goes through
``read_yaml_source``, which reads it with limits, because a board file may come from anyone: no
aliases (``*name``: ten nested levels of them, the "billion laughs", stand for 10^10 values to
every walk of the data), at most ``MAX_YAML_BYTES`` of text, ``MAX_YAML_NODES`` values and
``MAX_YAML_DEPTH`` levels of nesting. With those, reading and validating any file stays well
under a second (libyaml scans and parses; the limits are counted as the nodes are composed).
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


# Limits for any YAML file microbuild reads. The largest built-in board is about 6 KB and 300
# values; a file beyond these is a mistake or an attack, and is refused before it costs anything.
MAX_YAML_BYTES = 1024 * 1024
MAX_YAML_NODES = 20_000
MAX_YAML_DEPTH = 64


class YamlLimitError(yaml.MarkedYAMLError):
    """A file breaks one of the limits above; ``problem`` says which and what to do."""


if yaml.__with_libyaml__:
    class _Parser(yaml.cyaml.CParser):
        """libyaml's scanner and parser (ten times faster than PyYAML's own)."""
else:  # pragma: no cover (PyYAML built without libyaml: the same rules, only slower)
    class _Parser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
        def __init__(self, text: str) -> None:
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)


class _LimitedComposer(yaml.composer.Composer):
    """PyYAML's composer (events -> nodes) refusing aliases and counting values and depth. It is
    PyYAML's Python composer even over libyaml's parser, because libyaml's own composer resolves
    aliases where nothing can refuse them."""

    def __init__(self) -> None:
        super().__init__()
        self._nodes = 0
        self._depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise YamlLimitError(
                None, None, f"YAML aliases are not allowed here (*{event.anchor}): write the "
                            f"value out in full", event.start_mark)
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:
            raise YamlLimitError(
                None, None, f"more than {MAX_YAML_NODES:,} YAML nodes (keys and values); "
                            f"microbuild reads at most that many from one file (is this the "
                            f"right file?)", event.start_mark)
        if self._depth >= MAX_YAML_DEPTH:
            raise YamlLimitError(
                None, None, f"YAML nested more than {MAX_YAML_DEPTH} levels deep; microbuild "
                            f"reads at most that many levels", event.start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _BoardLoader(_LimitedComposer, _Parser, yaml.constructor.SafeConstructor,
                   yaml.resolver.Resolver):
    """The safe loader, with limits, plus ``!replace`` (nothing else: board files stay plain
    data)."""

    def __init__(self, text: str) -> None:
        _Parser.__init__(self, text)
        _LimitedComposer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


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
        with path.open("rb") as file:
            raw = file.read(MAX_YAML_BYTES + 1)  # no more than that, even from a pipe or a device
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such {kind}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read {kind}: {exc}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise error(f"{path}: larger than {MAX_YAML_BYTES // (1024 * 1024)} MiB, the most "
                    f"microbuild reads from a {kind}; is this the right file?")
    loader = _BoardLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except YamlLimitError as exc:
        raise error(f"{path}:{exc.problem_mark.line + 1}: {exc.problem}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = exc.problem or str(exc)
        context = f" ({exc.context})" if exc.context else ""
        raise error(f"{path}:{line}: YAML syntax error: {what}{context}") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: YAML error: {exc}") from None
    finally:
        loader.dispose()
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
