"""What a project format is: the interface `generate_project` and `build_project` call.

One module per format in this package (platformio, zephyr, scons, make); each defines one
:class:`ProjectFormat` subclass, which registers itself in :data:`FORMATS` by its ``name`` when it
is defined, and the package imports every module beside this one. Adding a format is adding a
module (docs/adding-a-project-format.md).
"""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from microbuild.boards import Board
from microbuild.project.executors import Executor

@dataclass
class Spec:
    """What a format's generator is given."""

    board: Board
    fmt: str
    executor: Executor
    toolchain: str | None  # a toolchain family the board lists; None: its default
    models: dict[str, str]  # C prefix -> the model's path in the project (model/x.tflite)
    compiled: dict[str, Any]  # C prefix -> CompiledModel
    input_file: str | None  # the embedded input's path in the project (single model), or None
    input_source: Path | None  # ... and the file it was copied from
    seed: int
    link_runtime: bool
    out_dir: Path
    tuning: str | None = None  # the tuning log's path in the project (model/tune.json), or None
    variants: dict[str, str] = field(default_factory=dict)  # forced kernel variants
    # Models (prefixes) with a workspace of their own, or True for all; the others share one.
    separate_workspace: list[str] | bool = field(default_factory=list)


@dataclass
class Instructions:
    """How to build and run a generated project; every command runs in the project folder."""

    build: list[str]
    run: list[str] = field(default_factory=list)
    readme: str = ""


#: every project format by name, filled as the classes are defined
FORMATS: dict[str, ProjectFormat] = {}


class ProjectFormat(ABC):
    """A kind of project `microbuild generate --format NAME` writes.

    ``name`` is the --format value, ``summary`` the line `--help` shows, ``rank`` where it stands
    in the list of formats (lower first). :meth:`generate` writes the files; the other hooks have
    defaults that suit a format whose tool needs no setup."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    rank: ClassVar[int] = 100

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and cls.name:
            known = FORMATS.get(cls.name)
            if known is not None and type(known).__qualname__ != cls.__qualname__:
                raise TypeError(f"project format '{cls.name}' is taken by "
                                f"{type(known).__module__}.{type(known).__qualname__}")
            FORMATS[cls.name] = cls()

    @abstractmethod
    def generate(self, spec: Spec, files) -> Instructions:
        """Add the project's files to ``files`` (a ProjectFiles) for ``spec`` (a Spec: board,
        compiled models, executor, options) and return its Instructions (the build and run
        commands, and the README text)."""

    @abstractmethod
    def build_commands(self, manifest: dict, env: dict) -> list[list[str]]:
        """The commands that build a generated project, from its manifest (run in its folder);
        a ToolchainError, saying how to install it, when the tool is missing."""

    def toolchain_problem(self) -> str | None:
        """Why --toolchain does not apply to this format, or None when it picks the compiler."""
        return None

    def check_compiled(self, model: Path, compiled, board) -> None:
        """Raise ProjectError when this format cannot take ``compiled`` (the CompiledModel of
        ``model``) as microbuild compiled it for ``board``."""

    def build_environment(self, manifest: dict, env: dict, out: Path) -> dict:
        """The environment the build commands run in (a format may set its tool up first)."""
        return env

    def run_build_command(self, command: list[str], cwd: Path, env: dict,
                          timeout: float) -> subprocess.CompletedProcess:
        """Run one build command, its output captured as text."""
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)


def format_names() -> tuple[str, ...]:
    """The registered formats' names, in the order `--format` lists them."""
    return tuple(sorted(FORMATS, key=lambda name: (FORMATS[name].rank, name)))
