"""What every project format shares: executors, the project's layout and manifest, templates,
the runtime copy, and the commands that run or flash a firmware.

A generated project holds two kinds of files:

- generated files, listed with their SHA-256 in ``.microbuild-project.json``: `microbuild generate`
  writes them and replaces them when it runs again (the build files, the board, the runtime copy,
  the model and whatever is compiled from it, README.md);
- the user's files (``src/main.c``, and a format's own settings file such as
  ``platformio_user.ini``): written once, when missing, and never touched again.

Regenerating removes generated files the new project no longer has (unless the user edited them),
and refuses to overwrite a file it did not write.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from microbuild import __version__
from microbuild.boards import Board
from microbuild.firmware import aot, board_files, rpc_table
from microbuild.errors import MicrobuildError
from microbuild.paths import project_templates_dir, runtime_dir


MANIFEST = ".microbuild-project.json"
SRC_DIR = "src"
MODEL_DIR = "model"
BOARD_DIR = "board"  # the board's YAML, resolved
RUNTIME_DIR = "runtime"  # microbuild's C runtime, copied in
RUNTIME_LICENCE_FILES = ("LICENSE", "NOTICE")  # Apache-2.0 text and notice, beside the copy
GENERATED_DIR = "generated"  # C compiled from the model and the board (make)
APP_MAIN = f"{SRC_DIR}/main.c"
# No folder is called `microbuild`: SCons puts the project folder on sys.path, and a folder of that
# name would hide the microbuild package from `import microbuild` in the build scripts.


class ProjectError(MicrobuildError):
    """A project cannot be generated (or built) as asked; the message says why and what to do."""


# ---- executors ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Executor:
    """How a firmware runs its models: one entry here is all a generator needs to know.

    ``main`` (relative to runtime/) seeds the user's src/main.c in bare-metal projects, unless
    ``skeleton``: then src/main.c is a real application (project/app_skeleton.py), and
    ``self_test`` (relative to runtime/), compiled in, is what it runs instead when built with
    MB_SELF_TEST=1;
    ``zephyr_main`` (in project_templates/zephyr/) seeds it in a Zephyr application. The
    firmware also links ``runtime_sources`` (relative to runtime/), and ``table(summaries,
    inputs)`` writes the generated C file ``table_file`` that tells main which models are linked
    (``inputs`` holds the arrays embedded per model and input when ``embeds_inputs``; else it is
    None). ``describe(board name, summaries)``, when set, is the JSON a host needs to drive the
    firmware (the RPC description, written as <firmware>.rpc.json). ``zephyr_kconfig`` are
    prj.conf lines the Zephyr main needs beyond the common ones."""

    name: str
    description: str
    main: str
    zephyr_main: str
    runtime_sources: tuple[str, ...]
    table_file: str
    # table(board, summaries, inputs, separate=()): ``separate`` names the models that do not
    # share the one workspace (microbuild/firmware/workspaces.py).
    table: Callable[..., str]
    embeds_inputs: bool
    zephyr_kconfig: tuple[tuple[str, str, str], ...] = ()
    describe: Callable[..., dict[str, Any]] | None = None
    formats: tuple[str, ...] | None = None  # the project formats it suits; None: every one
    skeleton: bool = False
    self_test: str | None = None


EXECUTORS: dict[str, Executor] = {
    "aot": Executor(
        name="aot",
        description="standalone: runs each model on an input embedded at build time, prints the "
                    "outputs and the timer ticks per inference on the console, and stops",
        main="aot/main.c",
        zephyr_main="main_aot.c",
        runtime_sources=(),
        table_file="mb_aot_models.c",
        table=lambda board, models, inputs, separate=(): aot.aot_models_c(models, inputs,
                                                                          separate),
        embeds_inputs=True,
        skeleton=True,
        self_test="aot/self_test.c",
    ),
    "rpc": Executor(
        name="rpc",
        description="host-driven: an RPC server on the console UART; `microbuild.connect` "
                    "uploads inputs, runs the model or single operators, times them and reads "
                    "the outputs (docs/rpc-protocol.md)",
        main="rpc/main.c",
        zephyr_main="main_rpc.c",
        runtime_sources=tuple(s for s in rpc_table.runtime_sources() if s != "rpc/main.c"),
        table_file="mb_rpc_models.c",
        table=lambda board, models, inputs, separate=(): rpc_table.rpc_models_c(
            board, models, rpc_table.DEFAULT_POOL_BYTES, separate),
        embeds_inputs=False,
        describe=lambda board, models, separate=(): rpc_table.describe(
            board, models, rpc_table.DEFAULT_POOL_BYTES, separate),
    ),
}

# Executors that exist (or are being written) but that projects cannot use yet, and why.
NOT_YET: dict[str, str] = {}


def get_executor(name: str) -> Executor:
    if name in EXECUTORS:
        return EXECUTORS[name]
    if name in NOT_YET:
        raise ProjectError(f"--executor {name}: {NOT_YET[name]}; generate with --executor aot")
    raise ProjectError(f"unknown executor '{name}'; choose one of: {', '.join(EXECUTORS)}")


def compiled_runtime_sources(board: Board, family: str | None, executor: Executor) -> list[str]:
    """The runtime/ sources a bare-metal project compiles, besides its own src/: start-up code,
    drivers and print helpers, every kernel, and the executor's own sources (not its main,
    which lives on as src/main.c)."""
    headers = set(boot_header_sources(board))  # assembled into a header, not linked as code
    return [f for f in runtime_files(board, family, executor)
            if f.endswith((".c", ".S")) and f != executor.main and f not in headers]


def runtime_files(board: Board, family: str | None, executor: Executor) -> list[str]:
    """Every runtime/ file a project for ``board`` copies (relative to runtime/)."""
    return sorted(set(board_files.runtime_files(
        board, family, [executor.main, *executor.runtime_sources,
                        *([executor.self_test] if executor.self_test else [])])
        + boot_header_sources(board)))


def boot_header_c_files(board: Board, setup) -> dict[str, str]:
    """{"mb_<step>.c": text} for the board's boot headers (RP2040 boot2 with its CRC), assembled
    now with the board's toolchain (``setup``), as microbuild's own build does after the compile:
    for projects whose build runs no microbuild (make)."""
    import subprocess
    import tempfile

    from microbuild.errors import BuildError
    from microbuild.firmware import image_steps

    files = {}
    for step in [] if board.is_host else image_steps.steps(board):
        if not step.header_source:
            continue
        with tempfile.TemporaryDirectory() as folder:
            obj, raw = Path(folder) / "header.o", Path(folder) / "header.raw"
            commands = [[setup.cc, *setup.asflags, "-c", str(runtime_dir() / step.header_source),
                         "-o", str(obj)],
                        [setup.objcopy, "-O", "binary", "-j", ".text", str(obj), str(raw)]]
            for command in commands:
                done = subprocess.run(command, capture_output=True, text=True)
                if done.returncode != 0:
                    raise BuildError(f"assembling {step.header_source} for {board.name} (image "
                                     f"step {step.name}) failed: {shlex.join(command)}\n"
                                     f"{done.stdout}{done.stderr}")
            files[f"mb_{step.name}.c"] = step.header_c(raw.read_bytes())
    return files


def boot_header_sources(board: Board) -> list[str]:
    """The runtime/ sources of the board's boot headers (RP2040 boot2), which a project's build
    assembles into the bytes its image starts with."""
    from microbuild.firmware import image_steps

    if board.is_host:
        return []
    return [step.header_source for step in image_steps.steps(board) if step.header_source]


# ---- templates ------------------------------------------------------------------------------------
def templates_dir() -> Path:
    """project_templates/: beside the package in a checkout, inside it in a wheel."""
    return project_templates_dir()


_PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


def render(text: str, values: dict[str, str]) -> str:
    """``{{name}}`` placeholders replaced by ``values[name]`` (every one must be given)."""
    missing = sorted({m for m in _PLACEHOLDER.findall(text) if m not in values})
    if missing:
        raise KeyError(f"template placeholders without a value: {', '.join(missing)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def template(fmt: str, name: str, **values: str) -> str:
    return render((templates_dir() / fmt / name).read_text(), values)


# ---- the project's files --------------------------------------------------------------------------
def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class ProjectFiles:
    """The files of one project, before they are written: generated ones (replaced on every
    generate) and the user's (written only when missing)."""

    generated: dict[str, bytes] = field(default_factory=dict)
    user: dict[str, bytes] = field(default_factory=dict)

    def add(self, rel: str, content: str | bytes) -> None:
        self.generated[rel] = content.encode() if isinstance(content, str) else content

    def add_user(self, rel: str, content: str | bytes) -> None:
        self.user[rel] = content.encode() if isinstance(content, str) else content


@dataclass
class Written:
    """What writing a project did, by path relative to the project folder."""

    written: list[str] = field(default_factory=list)  # generated files whose content changed
    unchanged: list[str] = field(default_factory=list)  # generated files already up to date
    user_created: list[str] = field(default_factory=list)  # user files written (were missing)
    user_kept: list[str] = field(default_factory=list)  # user files that existed: not touched
    removed: list[str] = field(default_factory=list)  # generated earlier, not part of it now
    replaced_edits: list[str] = field(default_factory=list)  # generated files the user had edited
    left_edited: list[str] = field(default_factory=list)  # stale generated files, user-edited: kept


def read_manifest(out: Path) -> dict[str, Any] | None:
    path = out / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or not isinstance(data.get("generated"), dict):
            raise ValueError("no 'generated' table")
        return data
    except (ValueError, OSError) as err:
        raise ProjectError(f"{path} is damaged ({err}); it lists the files microbuild generated "
                           "there. Restore it, or generate into a new folder") from None


def check_output_dir(out: Path) -> dict[str, Any] | None:
    """The manifest of an earlier project in ``out`` (None for a new or empty folder); refuses a
    folder that holds anything else."""
    if out.exists() and not out.is_dir():
        raise ProjectError(f"{out} is a file, not a folder; choose another output folder")
    manifest = read_manifest(out) if out.is_dir() else None
    if manifest is None and out.is_dir() and any(out.iterdir()):
        raise ProjectError(
            f"{out} is not empty and holds no project generated by microbuild (it has no "
            f"{MANIFEST}); generate into a new or empty folder, so that nothing of yours is "
            "overwritten")
    return manifest


def write_project(out: Path, files: ProjectFiles, manifest: dict[str, Any],
                  previous: dict[str, Any] | None) -> Written:
    """Write ``files`` into ``out`` (see the module docstring for the rules) and the manifest."""
    done = Written()
    old = dict((previous or {}).get("generated", {}))
    old_user = set((previous or {}).get("user", []))
    # Never overwrite what microbuild did not write: check everything before writing anything.
    for rel, data in sorted(files.generated.items()):
        path = out / rel
        if path.is_file() and rel not in old and path.read_bytes() != data:
            raise ProjectError(
                f"{path} exists and was not written by microbuild generate; move it away (or "
                "generate into another folder): a generated file of the same name replaces it")
        if path.exists() and not path.is_file():
            raise ProjectError(f"{path} is a folder, but the project has a file there; move it")
    for rel, data in sorted(files.generated.items()):
        path = out / rel
        if path.is_file():
            current = path.read_bytes()
            if current == data:
                done.unchanged.append(rel)
                continue
            if rel in old and _sha256(current) != old[rel]:
                done.replaced_edits.append(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        done.written.append(rel)
    for rel, data in sorted(files.user.items()):
        path = out / rel
        if path.exists():
            done.user_kept.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        done.user_created.append(rel)
    for rel, digest in sorted(old.items()):
        if rel in files.generated or rel in files.user or rel == MANIFEST:
            continue
        path = out / rel
        if not path.is_file():
            continue
        if _sha256(path.read_bytes()) == digest:
            path.unlink()
            done.removed.append(rel)
            _prune_empty(path.parent, out)
        else:
            done.left_edited.append(rel)
    user = sorted(set(files.user) | (old_user & {r for r in old_user if (out / r).exists()}))
    document = dict(manifest)
    document["user"] = user
    document["generated"] = {rel: _sha256(data) for rel, data in sorted(files.generated.items())}
    text = json.dumps(document, indent=1, sort_keys=True) + "\n"
    manifest_path = out / MANIFEST
    if not manifest_path.is_file() or manifest_path.read_text() != text:
        out.mkdir(parents=True, exist_ok=True)
        manifest_path.write_text(text)
    return done


def _prune_empty(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


# ---- pieces every project has ---------------------------------------------------------------------
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
    from microbuild.api import board_yaml
    from microbuild.boards.drivers import SOURCE_KEYS

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


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---- running and flashing -------------------------------------------------------------------------
def run_command(board: Board, firmware: str) -> list[str] | None:
    """The command line that runs ``firmware`` (a path as the build files name it) on an emulated
    board or the host, with programs named as on PATH (not where this machine has them), so
    that generated files do not depend on what is installed; None for a real board."""
    runner = board.default_runner
    if runner == "host":
        return [firmware]
    if runner == "qemu":
        from microbuild.device.runners.qemu import QemuRunner

        class Named(QemuRunner):
            def executable(self) -> str:
                default = "qemu-system-arm" if board.arch.startswith("armv") else \
                    "qemu-system-riscv32"
                return (board.qemu or {}).get("executable", default)

        command = Named(board).command(Path("FIRMWARE"))
        return command[:-1] + [firmware]
    if runner == "simavr":
        return ["simavr", "-m", board.core, "-f", str(board.cpu["clock_hz"]), firmware]
    return None


def flash_commands(board: Board, elf: str, binary: str, hexfile: str) -> list[tuple[str, str]]:
    """(runner, shell command) for each flash tool the board lists that a command line can
    drive, in the board's order of preference: the command lines of microbuild's own flash
    runners (microbuild/device/runners), so `make flash` and `microbuild flash` do the same."""
    from microbuild.device.runners import RUNNERS, FirmwareImage, FlashToolRunner

    image = FirmwareImage(Path(elf), Path(binary), Path(hexfile))
    found = []
    for listed in board.runners:
        cls = RUNNERS.get(listed.runner)
        # jlink needs a command file and platformio a project: neither is one command line here.
        if cls is None or not issubclass(cls, FlashToolRunner) or listed.runner in (
                "jlink", "platformio"):
            continue
        # A fixed port keeps the generated file the same on every machine (avrdude would
        # otherwise look for the board's serial port now).
        options = {"args": {"port": "/dev/ttyACM0"}} if listed.runner == "avrdude" else {}
        try:
            command = cls(board, **options).flash_command(image)
        except MicrobuildError:
            continue  # e.g. pyocd without a target in the YAML
        # The runners name files by absolute path; a project names them relative to itself.
        relative = {str(Path(f).resolve()): f for f in (elf, binary, hexfile)}
        parts = [str(part) for part in command]
        for absolute, rel in relative.items():
            parts = [part.replace(absolute, rel) for part in parts]
        found.append((listed.runner, shlex.join(parts)))
    return found


def console_hint(board: Board) -> str:
    """How to watch the console of a real board."""
    baud = board.transport.get("baud", 115200)
    return (f"open its console (`pio device monitor -b {baud}`, `picocom -b {baud} /dev/ttyACM0` "
            f"or any serial terminal at {baud} baud) and reset the board")


def toolchain_packages(board: Board, family: str | None) -> str:
    from microbuild.firmware.toolchains import debian_packages, select_toolchain

    return " ".join(debian_packages(select_toolchain(board, family).family))


def flash_package(runner: str) -> str | None:
    """The Debian package of a flash runner's tool, as its class declares (None: not in Debian,
    e.g. pyocd, which is on PyPI)."""
    from microbuild.device.runners import debian_package

    return debian_package(runner)


def emulator_package(board: Board) -> str | None:
    if board.default_runner == "qemu":
        program = (board.qemu or {}).get("executable", "qemu-system-arm")
        return "qemu-system-arm" if program == "qemu-system-arm" else "qemu-system-misc"
    if board.default_runner == "simavr":
        return "simavr"
    return None


# ---- README pieces --------------------------------------------------------------------------------
def models_text(spec) -> str:
    """The model (or a nested Markdown list of models): file, C prefix, inputs and outputs."""
    lines = []
    for prefix, rel in spec.models.items():
        model = spec.compiled[prefix]

        def tensors(specs) -> str:
            return ", ".join(f"{s.dtype} {list(s.shape)}" for s in specs)
        lines.append(f"`{rel}`: C prefix `{prefix}`, input {tensors(model.inputs)}, output "
                     f"{tensors(model.outputs)}; {model.workspace_bytes:,} bytes of workspace, "
                     f"{model.weights_bytes:,} bytes of weights")
    if len(lines) == 1:
        return lines[0]
    return "".join(f"\n  - {line}" for line in lines)


def input_text(spec) -> str:
    if not spec.executor.embeds_inputs:
        return "none embedded: the host sends inputs"
    if spec.input_file:
        return f"`{spec.input_file}`"
    return (f"random, seeded with {spec.seed} (the input `microbuild build --seed {spec.seed}` "
            "embeds)")


# The variable (Make, SCons argument, environment) that overrides how a project's `regenerate`
# runs microbuild.
MICROBUILD_VARIABLE = "MICROBUILD"


def microbuild_runner() -> str:
    """How a project's `regenerate` runs microbuild: the interpreter that ran `generate`, by its
    absolute path (`<python> -m microbuild`), so it works where no `microbuild` is on PATH (a
    venv not activated, setup.sh's .venv); MICROBUILD overrides it."""
    return shlex.join([sys.executable, "-m", "microbuild"])


def regenerate_arguments(spec) -> str:
    """The arguments after `microbuild` that regenerate this project from inside it."""
    parts = ["generate", "--board", f"{BOARD_DIR}/{spec.board.name}.yaml"]
    for rel in spec.models.values():
        parts += ["--model", rel]
    parts += ["--format", spec.fmt, "--executor", spec.executor.name]
    if spec.toolchain:
        parts += ["--toolchain", spec.toolchain]
    if spec.input_file:
        parts += ["--input", spec.input_file]
    elif spec.seed:
        parts += ["--seed", str(spec.seed)]
    if spec.link_runtime:
        parts.append("--link-runtime")
    # The kernel choice too: the tuning log copied into the project, every forced variant.
    if spec.tuning:
        parts += ["--tuning", spec.tuning]
    for key, name in sorted(spec.variants.items(), key=lambda kv: str(kv[0])):
        parts += ["--variant", f"{key}={name}"]
    separate = getattr(spec, "separate_workspace", ())
    for model in (["*"] if separate is True else list(separate or ())):
        parts += ["--separate-workspace", model]
    return shlex.join(parts + ["-o", "."])


def regenerate_command(spec) -> str:
    """The whole command that regenerates this project from inside it (for READMEs)."""
    return f"{microbuild_runner()} {regenerate_arguments(spec)}"


def common_values(spec) -> dict[str, str]:
    """Placeholders every format's README uses."""
    board = spec.board
    first = next(iter(spec.models.values()))
    runtime_note = (f"(not copied: the build uses microbuild's runtime in place, from "
                    f"`{runtime_dir()}`, because of `--link-runtime`)" if spec.link_runtime else
                    "the part of microbuild's C runtime this board needs (kernels, drivers, "
                    "start-up code), copied in")
    return {
        "board": board.name,
        "board_title": board.title,
        "board_yaml": f"{BOARD_DIR}/{board.name}.yaml",
        "executor": spec.executor.name,
        "executor_description": spec.executor.description,
        "models": models_text(spec),
        "first_model": first,
        "input": input_text(spec),
        "regenerate": regenerate_command(spec),
        "runtime_note": runtime_note,
        "version": __version__,
        "main_note": ("your application: fills the input from your sensor (`read_sensor`), "
                      "runs the model" + ("s" if len(spec.models) > 1 else "") + ", prints the "
                      "top class" if spec.executor.skeleton else
                      "your application: the executor's `main`"),
    }


def prints_text(spec) -> str:
    """What the firmware prints when it runs, for a README's Run section."""
    if spec.executor.skeleton:
        return ("It runs your application (`src/main.c`): as generated, it prints the top class "
                "of the scores and the timer ticks the inference took.")
    return ("It prints one `mb-aot` line per output (hex bytes), the timer ticks per inference, "
            "and exits with status 0 when every model returned 0.")


def self_test_section(spec, commands: str) -> str:
    """The README's "Self-test against TFLM" section (the AOT executor): ``commands`` build
    with MB_SELF_TEST=1 and run (or flash) the result."""
    if not spec.executor.self_test:
        return ""
    return ("\n\n## Self-test against TFLM\n\n"
            f"```sh\n{commands}\n```\n\n"
            "builds with `MB_SELF_TEST=1`, so that `src/main.c`'s `main` runs microbuild's "
            f"self-test (`{RUNTIME_DIR}/{spec.executor.self_test}`) instead of your "
            "application. Each model runs on the input embedded at build time, "
            f"{input_text(spec)}; it prints one `mb-aot` line per output (hex bytes) and the "
            "timer ticks per inference, exit status 0 when every model returned 0. TFLM gives "
            "the same outputs bit for bit (`microbuild build --run` prints them as a table). "
            "Building without it again gives your application back.")


def rpc_run_section(spec, elf: str, description: str) -> str:
    """The README's "Run" section for an RPC firmware: it waits for a host, so running it means
    connecting to it from Python."""
    board = spec.board
    prefix = next(iter(spec.models))
    model = spec.compiled[prefix]
    shape = ", ".join(f"{s.dtype} {list(s.shape)}" for s in model.inputs)
    starts = ("connect() starts it as a process" if board.is_host else
              "connect() boots it in QEMU" if board.is_emulated else
              "connect() flashes it with the board's first flash runner and opens its serial port "
              "(found from the board's USB ids, or pass port=)")
    return (
        "The firmware is an RPC server (docs/rpc-protocol.md in microbuild): it waits for a host "
        f"to drive it over its console. {starts}; from this folder, in the Python environment "
        "microbuild is installed in:\n\n"
        "```python\n"
        "import numpy as np, microbuild\n"
        f"with microbuild.connect(\"{BOARD_DIR}/{board.name}.yaml\", \"{elf}\",\n"
        f"                        description=\"{description}\") as dev:\n"
        f"    x = np.zeros(dev.specs(\"{prefix}\")[0].shape, np.int8)   # input: {shape}\n"
        f"    print(dev.run(\"{prefix}\", x))                  # the outputs\n"
        f"    for op in dev.profile(\"{prefix}\", x).ops:      # timer ticks per operator\n"
        "        print(op.index, op.opcode, op.ticks)\n"
        "```\n")
