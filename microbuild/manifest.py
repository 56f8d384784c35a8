"""The project manifest: ``microbuild.yaml`` at the root of a user's firmware repository.

    board: nucleo-f746zg            # a board name or a board YAML file
    models:
      - model/kws.tflite            # a path, or a mapping:
      - {path: model/vww.tflite, prefix: vww, tuning: tune.json, variants: {CONV_2D: dsp}}
    executor: app                   # app (default with sources) | aot | rpc
    sources: [src/, include/]       # files, folders (also on the include path), globs
    boards: [boards/]               # extra board folders (default: boards/ if there is one)
    build_dir: build

It is found by walking up from the current folder (:func:`find_manifest`), validated like a
board file (schema ``microbuild/schema/manifest.schema.json``, errors as ``file:line: key.path:
message`` with did-you-mean, the boards room's machinery), and its paths are relative to its own
folder. Commands call :func:`apply_manifest` to fill the options the command line left unset:
the command line always wins.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from microbuild.boards.loader import ENV_PATH, available_boards, did_you_mean, schema_problems
from microbuild.boards.source import Location, Problem, read_yaml_source
from microbuild.errors import MicrobuildError
from microbuild.compiler.c_names import model_prefix

MANIFEST_NAME = "microbuild.yaml"
DEFAULT_BUILD_DIR = "build"
SOURCE_SUFFIXES = (".c", ".cpp", ".cc", ".cxx", ".S", ".s")


class ManifestError(MicrobuildError):
    """microbuild.yaml is malformed or names something that is not there."""


@dataclass
class ManifestModel:
    path: Path  # absolute
    prefix: str | None = None
    tuning: Path | None = None  # absolute
    variants: dict[str, str] = field(default_factory=dict)


def default_out_dir(board: str, executor: str) -> Path:
    # A board given as a YAML file builds into build/<file name without .yaml> by default; an
    # RPC firmware into build/<board>-rpc, so it does not replace the AOT one.
    name = Path(board).stem if board.endswith((".yaml", ".yml")) else board
    return Path("build") / (name if executor == "aot" else f"{name}-{executor}")


@dataclass
class Manifest:
    """A validated microbuild.yaml; every path in it absolute."""

    path: Path
    board: str | None  # a board name, or the absolute path of a board YAML file
    toolchain: str | None
    models: list[ManifestModel]
    executor: str | None  # as written; see default_executor
    sources: list[Path]  # C/C++/assembly files
    include_dirs: list[Path]  # the folders named in sources
    board_folders: list[Path]
    build_dir: Path

    @property
    def root(self) -> Path:
        return self.path.parent

    def out_dir(self, board: str, executor: str) -> Path:
        """<build_dir>/<board>[-executor]: the CLI's default folder, under the manifest's."""
        return self.build_dir / default_out_dir(board, executor).relative_to("build")

    def activate(self) -> None:
        """Put the manifest's board folders on the board search path (MICROBUILD_BOARDS_PATH, so
        the SCons processes a build starts see them too), after any already there."""
        parts = [p for p in os.environ.get(ENV_PATH, "").split(os.pathsep) if p]
        for folder in self.board_folders:
            if str(folder) not in parts:
                parts.append(str(folder))
        if parts:
            os.environ[ENV_PATH] = os.pathsep.join(parts)


@lru_cache(maxsize=1)
def manifest_schema() -> dict[str, Any]:
    text = resources.files("microbuild").joinpath("schema/manifest.schema.json").read_text()
    return json.loads(text)


def find_manifest(start: str | Path | None = None) -> Path | None:
    """microbuild.yaml in ``start`` (default: the current folder) or the nearest parent."""
    folder = Path(start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / MANIFEST_NAME
        if path.is_file():
            return path
    return None


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate one manifest; ManifestError lists every problem as file:line: key: why."""
    path = Path(path).resolve()
    source = read_yaml_source(path, kind="project manifest", error=ManifestError, empty_ok=True)

    def location(key_path) -> Location:
        key_path = tuple(key_path)
        while key_path not in source.lines and key_path:
            key_path = key_path[:-1]
        return Location(path, source.lines.get(key_path, 1))

    problems = schema_problems(source.data, manifest_schema(), location)
    if not problems:
        manifest, problems = _checked(path, source.data, location)
    if problems:
        raise ManifestError(f"project manifest {path} is not valid:\n"
                            + "\n".join(f"  {p}" for p in problems))
    return manifest


def _checked(path: Path, data: dict[str, Any], location) -> tuple[Manifest | None, list[Problem]]:
    """What the schema cannot say: files that must exist, C prefixes used twice, board names."""
    root = path.parent
    problems: list[Problem] = []

    def add(key_path: tuple, message: str) -> None:
        problems.append(Problem(location(key_path), key_path, message))

    def existing(key_path: tuple, text: str, folder: bool = False) -> Path:
        resolved = (root / text).resolve()
        if not (resolved.is_dir() if folder else resolved.is_file()):
            add(key_path, f"no such {'folder' if folder else 'file'}: {resolved}")
        return resolved

    default_boards = root / "boards"
    board_folders = ([existing(("boards", i), f, folder=True)
                      for i, f in enumerate(data["boards"])] if "boards" in data
                     else [default_boards] if default_boards.is_dir() else [])

    board = data.get("board")
    if board is not None and (board.endswith((".yaml", ".yml")) or "/" in board):
        board = str(existing(("board",), board))
    elif board is not None:
        known = set(available_boards())
        known |= {p.stem for folder in board_folders if folder.is_dir()
                  for p in folder.glob("*.yaml")}
        if board not in known:
            add(("board",), f"no board named '{board}'{did_you_mean(board, known)}; "
                            f"`microbuild boards list` shows them (add your own board folders "
                            f"with `boards:`)")

    # Imported here: it loads every operator module, which a command reading the manifest for
    # its board alone (`microbuild --help` in a project folder too) should not wait for.
    from microbuild.compiler.ops import REGISTRY

    models: list[ManifestModel] = []
    prefixes: dict[str, int] = {}
    for i, entry in enumerate(data.get("models", [])):
        entry = {"path": entry} if isinstance(entry, str) else entry
        key = ("models", i) if isinstance(data["models"][i], str) else ("models", i, "path")
        model = ManifestModel(existing(key, entry["path"]), entry.get("prefix"))
        if model.path.suffix != ".tflite" and model.path.is_file():
            add(key, f"{entry['path']}: a model is a .tflite file")
        if "tuning" in entry:
            # Need not exist yet: `microbuild tune` writes it (a build reports a missing log).
            model.tuning = (root / entry["tuning"]).resolve()
        for opcode, variant in entry.get("variants", {}).items():
            if opcode != "*" and not opcode.isdigit() and opcode not in REGISTRY:
                add(("models", i, "variants", opcode),
                    f"unknown operator{did_you_mean(opcode, REGISTRY)}")
            model.variants[opcode] = variant
        prefix = model.prefix or model_prefix(model.path)
        if prefix in prefixes:
            add(("models", i), f"C prefix '{prefix}' is also model {prefixes[prefix]}'s; give "
                               f"one of them `prefix:`")
        prefixes[prefix] = i
        models.append(model)

    sources: list[Path] = []
    include_dirs: list[Path] = []
    for i, entry in enumerate(data.get("sources", [])):
        target = (root / entry).resolve()
        if glob.has_magic(entry):
            matched = sorted(Path(p).resolve() for p in glob.glob(str(root / entry),
                                                                 recursive=True))
            files = [p for p in matched if p.suffix in SOURCE_SUFFIXES and p.is_file()]
            if not files:
                add(("sources", i), f"'{entry}' matches no C, C++ or assembly file "
                                    f"({', '.join(SOURCE_SUFFIXES)})")
            sources += files
        elif target.is_dir():
            include_dirs.append(target)
            sources += sorted(p for p in target.rglob("*")
                              if p.suffix in SOURCE_SUFFIXES and p.is_file())
        elif target.is_file():
            if target.suffix not in SOURCE_SUFFIXES:
                add(("sources", i), f"{entry}: not a C, C++ or assembly file (expected one of "
                                    f"{', '.join(SOURCE_SUFFIXES)}); name a header's folder to "
                                    f"put it on the include path")
            sources.append(target)
        else:
            add(("sources", i), f"no such file or folder: {target}")
    sources = list(dict.fromkeys(sources))  # a file named twice (a folder and a glob) once

    executor = data.get("executor")
    if executor == "app" and "sources" in data and not sources:
        add(("sources",), "executor app runs your own main(), but these entries name no C or "
                          "C++ file")
    elif executor == "app" and "sources" not in data:
        add(("executor",), "executor app runs your own main(): list its files in `sources:`")
    if problems:
        return None, problems
    return Manifest(path=path, board=board, toolchain=data.get("toolchain"), models=models,
                    executor=executor, sources=sources, include_dirs=include_dirs,
                    board_folders=board_folders,
                    build_dir=(root / data.get("build_dir", DEFAULT_BUILD_DIR)).resolve()), []


# ---- the commands' side ------------------------------------------------------------------------
def apply_manifest(args: argparse.Namespace, start: str | Path | None = None,
                   executor_default: str = "aot") -> Manifest | None:
    """Fill what the command line left unset (None or empty) from the nearest microbuild.yaml:
    board, model, executor, toolchain, out_dir, tuning (one log shared by the models), and set
    ``args.manifest`` and ``args.manifest_models`` (the manifest's model entries, when the
    models come from it: their prefixes, logs and variants apply). Puts the manifest's board
    folders on the search path. Returns the manifest, or None when there is none (then
    ``args.manifest`` is None too). Commands call it first, before reading args.

    An unset executor becomes the manifest's, else ``app`` when it lists sources, else
    ``executor_default`` (the command's own default), which also names the build folder
    (<build_dir>/<board>-<executor>; "tune" for tune's)."""
    path = find_manifest(start)
    args.manifest = None
    args.manifest_models = None
    if path is None:
        return None
    manifest = load_manifest(path)
    manifest.activate()
    args.manifest = manifest
    if getattr(args, "board", None) is None and manifest.board is not None:
        args.board = manifest.board
    if hasattr(args, "model") and not args.model and manifest.models:
        args.model = [str(m.path) for m in manifest.models]
        args.manifest_models = manifest.models
    if getattr(args, "executor", "unset") is None:
        args.executor = manifest.executor or ("app" if manifest.sources else executor_default)
    if getattr(args, "toolchain", "unset") is None:
        args.toolchain = manifest.toolchain
    if args.manifest_models and getattr(args, "tuning", "unset") is None:
        logs = {m.tuning for m in args.manifest_models}
        if len(logs) == 1:
            args.tuning = None if None in logs else str(logs.pop())
    if getattr(args, "out_dir", "unset") is None and getattr(args, "board", None):
        executor = getattr(args, "executor", None) or executor_default
        args.out_dir = str(manifest.out_dir(args.board, executor))
    return manifest


def require(args: argparse.Namespace, *names: str) -> None:
    """A ManifestError naming the options still missing after apply_manifest."""
    missing = [n for n in names if not getattr(args, n, None)]
    if not missing:
        return
    options = " and ".join(f"--{n}" for n in missing)
    keys = " or ".join(f"`{'models' if n == 'model' else n}:`" for n in missing)
    where = (f"{args.manifest.path} sets no {keys}"
             if getattr(args, "manifest", None) is not None else
             f"no {MANIFEST_NAME} in {Path.cwd()} or a folder above it")
    raise ManifestError(f"give {options}: {where} (`microbuild init` writes one)")


def build_options(args: argparse.Namespace) -> dict[str, Any]:
    """build_firmware keyword arguments that come from the manifest: the models' prefixes, logs
    and variants (when the models are the manifest's), and the application's sources with the
    app executor."""
    options: dict[str, Any] = {}
    manifest = getattr(args, "manifest", None)
    models = getattr(args, "manifest_models", None)
    if models:
        named = {(m.prefix or model_prefix(m.path)): m for m in models}
        if any(m.prefix for m in models):
            options["models"] = {p: str(m.path) for p, m in named.items()}
        if any(m.tuning for m in models) and not getattr(args, "tuning", None):
            options["model_tuning"] = {p: str(m.tuning) for p, m in named.items() if m.tuning}
        if any(m.variants for m in models):
            options["model_variants"] = {p: dict(m.variants) for p, m in named.items()
                                         if m.variants}
    if manifest is not None and getattr(args, "executor", None) == "app":
        options["sources"] = [str(p) for p in manifest.sources]
        options["include_dirs"] = [str(p) for p in manifest.include_dirs]
    return options


# ---- microbuild init ---------------------------------------------------------------------------
TEMPLATE = """\
# microbuild.yaml: the project manifest. microbuild finds it from this folder and every folder
# below it, so `microbuild build`, `run`, `tune` and `generate` need no options (the command
# line still overrides each one). Paths are relative to this file.
{board}
# The models in the firmware: a .tflite path, or a mapping with options.
{models}
#  - path: model/vww.tflite
#    prefix: vww                 # C prefix of vww_run(), vww_input0() ... (default: file name)
#    tuning: tune.json           # a log from `microbuild tune`
#    variants: {{CONV_2D: dsp}}    # forced kernel variants

# Your application: C/C++ files, folders (every source below them; the folder is also on the
# include path) or globs. With sources, `build` and `run` build your main() (executor app).
# sources:
#   - src/

# executor: app                  # app | aot (microbuild's self-test harness) | rpc (host-driven)
# toolchain: clang               # one of the board's toolchain families (default: its first)
# boards: [boards/]              # your board YAML files (default: boards/ if there is one)
# build_dir: build               # where firmware goes: <build_dir>/<board>[-executor]
"""


def manifest_text(board: str | None = None, models: list[str] | None = None,
                  sources: list[str] | None = None) -> str:
    """A commented manifest; ``board``, ``models`` and ``sources`` filled in when given."""
    board_line = (f"board: {board}" if board else
                  "# board: mps2-an500            # a board name (`microbuild boards list`) or "
                  "a board YAML file")
    model_lines = ("models:\n" + "\n".join(f"  - {m}" for m in models) if models
                   else "# models:\n#   - model/kws.tflite")
    text = TEMPLATE.format(board=board_line, models=model_lines)
    if sources:
        text = text.replace("# sources:\n#   - src/",
                            "sources:\n" + "\n".join(f"  - {s}" for s in sources))
    return text


def write_manifest(folder: str | Path, board: str | None = None,
                   models: list[str] | None = None, sources: list[str] | None = None,
                   force: bool = False) -> Path:
    """Write ``folder``/microbuild.yaml (refusing to replace one without ``force``) and check
    that it loads; paths given are made relative to ``folder`` where they are below it."""
    folder = Path(folder).resolve()
    path = folder / MANIFEST_NAME
    if path.exists() and not force:
        raise ManifestError(f"{path} exists; edit it, or pass --force to replace it")

    def relative(text: str) -> str:
        given = Path(text)
        resolved = (Path.cwd() / given).resolve()
        try:
            return resolved.relative_to(folder).as_posix()
        except ValueError:
            return str(resolved)

    if board is not None and (board.endswith((".yaml", ".yml")) or os.sep in board):
        board = relative(board)
    text = manifest_text(board, [relative(m) for m in models or []],
                         [relative(s) for s in sources or []])
    previous = path.read_bytes() if path.exists() else None
    path.write_text(text)
    try:
        load_manifest(path)
    except ManifestError:
        # Never leave a manifest behind that every later command would trip over.
        if previous is None:
            path.unlink()
        else:
            path.write_bytes(previous)
        raise
    return path


__all__ = ["MANIFEST_NAME", "Manifest", "ManifestError", "ManifestModel", "apply_manifest",
           "build_options", "find_manifest", "load_manifest", "manifest_text", "require",
           "write_manifest"]
