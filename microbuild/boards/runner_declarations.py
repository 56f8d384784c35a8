"""The runners a board file's ``flash:`` list may name and the args each takes, as data.

The runner classes (microbuild/device/runners) declare their ``name`` and typed ``arguments``;
the board loader checks a board's flash entries against them, with file:line and key path like
every other board error. The device layer sits above boards, so the loader reads a copy of the
built-in classes' declarations, schema/runners.json, instead of importing them:
tools/update_runner_declarations.py writes it from the classes, and
tests/boards/test_runner_declarations.py fails while it differs from them. A runner class defined
anywhere else (docs/adding-a-runner.md's toy) adds its own declaration when it is defined
(:func:`declare`, called by ``Runner.__init_subclass__``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from microbuild.errors import did_you_mean

RUNNERS_FILE = "schema/runners.json"  # in the package


@dataclass(frozen=True)
class RunnerArg:
    """One setting a runner takes from its board YAML entry (``flash: - runner: X, args:``).

    ``types`` are the YAML values it accepts: str, int, bool, float, or list (of strings)."""

    name: str
    types: tuple[type, ...]
    help: str

    def problem(self, value: Any) -> str | None:
        """Why ``value`` does not fit this argument, or None when it does."""
        if value is None:
            return None
        for kind in self.types:
            if kind is list and isinstance(value, list):
                if all(isinstance(item, str) for item in value):
                    return None
                return f"`{self.name}` is a list of strings; {value!r} has other items"
            # YAML's true/false are not numbers here, though bool is an int in Python.
            if kind in (int, float) and isinstance(value, bool):
                continue
            if kind is float and isinstance(value, int):
                return None
            if kind is not list and isinstance(value, kind):
                return None
        return (f"`{self.name}` takes {_type_words(self.types)}, not {_yaml_type(value)} "
                f"{value!r} ({self.help})")


_TYPE_WORDS = {str: "a string", int: "an integer", bool: "true or false", float: "a number",
               list: "a list of strings"}
# How runners.json names the types.
_TYPE_NAMES = {str: "str", int: "int", bool: "bool", float: "float", list: "list"}


def _type_words(types: tuple[type, ...]) -> str:
    return " or ".join(_TYPE_WORDS[t] for t in types)


def _yaml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "the boolean"
    return {int: "the integer", float: "the number", str: "the string", list: "the list",
            dict: "the mapping"}.get(type(value), "the value")


@dataclass(frozen=True)
class RunnerDeclaration:
    """What a board file may say of one runner: its name, the args it takes (its own and its base
    classes'), and the class that declares them (named in messages)."""

    name: str
    declared_in: str  # "module.Class"
    arguments: dict[str, RunnerArg]

    def to_json(self) -> dict[str, Any]:
        return {"class": self.declared_in,
                "args": [{"name": a.name, "types": [_TYPE_NAMES[t] for t in a.types],
                          "help": a.help} for a in self.arguments.values()]}

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> RunnerDeclaration:
        types = {text: kind for kind, text in _TYPE_NAMES.items()}
        return cls(name, data["class"], {
            a["name"]: RunnerArg(a["name"], tuple(types[t] for t in a["types"]), a["help"])
            for a in data["args"]})


def declarations_text(declarations: list[RunnerDeclaration]) -> str:
    """runners.json's text for ``declarations`` (what tools/update_runner_declarations.py
    writes)."""
    return json.dumps({
        "$comment": "Written by tools/update_runner_declarations.py from the runner classes in "
                    "microbuild/device/runners: edit the classes, not this file.",
        "runners": {d.name: d.to_json() for d in sorted(declarations, key=lambda d: d.name)},
    }, indent=1) + "\n"


@lru_cache(maxsize=1)
def _built_in() -> dict[str, RunnerDeclaration]:
    text = resources.files("microbuild").joinpath(RUNNERS_FILE).read_text()
    return {name: RunnerDeclaration.from_json(name, data)
            for name, data in json.loads(text)["runners"].items()}


# Declarations of runner classes defined at run time, by name; they override the built-in copy.
_declared: dict[str, RunnerDeclaration] = {}


def declare(declaration: RunnerDeclaration) -> None:
    """Make a runner class's declaration known to the board loader."""
    _declared[declaration.name] = declaration


def undeclare(name: str) -> None:
    """Forget a runner declared at run time (a test's toy runner, once the test is done)."""
    _declared.pop(name, None)


def runner_declarations() -> dict[str, RunnerDeclaration]:
    """Every runner a board file may name, by name."""
    return {**_built_in(), **_declared}


def flash_entry_problems(flash: list[Any]) -> list[tuple[tuple, str]]:
    """(key path, message) for each entry of a board's ``flash:`` list naming no known runner,
    or giving it an arg it does not declare or a value of the wrong type. The board loader turns
    the key paths into file:line."""
    known = runner_declarations()
    problems: list[tuple[tuple, str]] = []
    for i, entry in enumerate(flash):
        name = entry.get("runner")
        runner = known.get(name)
        if runner is None:
            problems.append((("flash", i, "runner"),
                             f"no runner '{name}'{did_you_mean(name, known)}; runners: "
                             f"{', '.join(sorted(known))}"))
            continue
        declared = runner.arguments
        for key, value in (entry.get("args") or {}).items():
            arg = declared.get(key)
            if arg is None:
                takes = ", ".join(declared) if declared else "none"
                problems.append((("flash", i, "args", key),
                                 f"runner {name} has no arg `{key}`{did_you_mean(key, declared)};"
                                 f" its args: {takes} (docs/adding-a-runner.md: declared in "
                                 f"{runner.declared_in}.arguments)"))
                continue
            why = arg.problem(value)
            if why is not None:
                problems.append((("flash", i, "args", key), f"runner {name}: {why}"))
    return problems
