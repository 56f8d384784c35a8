"""The SCons side of one board: its environment (toolchain flags, generated config and linker
script), the runtime library built for it, and how a build step reports a user's error.

Each environment is made once per (board, toolchain) and kept under a key, which the builders'
actions find in ``$MICROBUILD_BOARD_KEY`` (an action sees only the environment, and a key keeps
the board out of what SCons hashes).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from typing import Any

from microbuild.boards import Board, resolve_board
from microbuild.errors import MicrobuildError
from microbuild.firmware import board_files, linker_script, toolchains
from microbuild.paths import runtime_dir

_boards: dict[str, tuple[Board, Any]] = {}  # key -> (board, its SCons environment)
_board_keys: dict[tuple, str] = {}  # (env, board object, toolchain asked for) -> key above
_runtimes: dict[str, list] = {}  # key above -> MicroRuntime's nodes


def board_of(env) -> Board:
    """The board an environment made by :func:`board_environment` builds for."""
    return _boards[env["MICROBUILD_BOARD_KEY"]][0]


def knows_board(env) -> bool:
    """True when ``env`` was made by :func:`board_environment` in this SCons run."""
    return env.get("MICROBUILD_BOARD_KEY") in _boards


def report_error(err: MicrobuildError, target=None, report=None) -> None:
    """Print a user's error for SCons' output. When microbuild runs SCons it also names a file in
    MICROBUILD_ERROR_LOG, and the error goes there as one JSON line (with the target that failed,
    and the fit report for a FitError), so the CLI can re-raise it without parsing output that
    parallel jobs interleave."""
    print(f"microbuild: error: {err}", file=sys.stderr)
    sys.stderr.flush()
    log = os.environ.get("MICROBUILD_ERROR_LOG")
    if log:
        record = {"kind": type(err).__name__, "message": str(err),
                  "target": str(target) if target is not None else None}
        if report is not None:
            record["report"] = report.to_dict()
        line = (json.dumps(record) + "\n").encode()
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)  # one write of one line: appends from parallel jobs don't mix
        finally:
            os.close(fd)


def quiet() -> bool:
    return not os.environ.get("MICROBUILD_VERBOSE")


def board_environment(env, board, toolchain: str | None = None):
    """A clone of ``env`` set up to compile for ``board`` (name, YAML path or Board) with its
    default toolchain or the family ``toolchain``. Made once per (board, toolchain)."""
    board = resolve_board(board)
    early = (id(env), id(board), toolchain)
    if early in _board_keys:
        return _boards[_board_keys[early]][1]
    setup = toolchains.toolchain_setup(board, toolchain)
    default = board.toolchain.family == setup.family
    variant = board.name if default else f"{board.name}+{setup.family}"
    # The board's own source files take part: two boards written alike in two folders differ.
    local = {kind: str(path) for kind, path in board.local_sources.items()}
    key = f"{id(env)}:{variant}:{json.dumps([board.data, local], sort_keys=True)}"
    _board_keys[early] = key
    if key in _boards:
        return _boards[key][1]

    benv = env.Clone()
    benv.Replace(**setup.as_scons())
    benv["ENV"]["PATH"] = os.environ.get("PATH", benv["ENV"].get("PATH", ""))
    for tool in ("AR", "RANLIB", "OBJCOPY"):
        benv[tool] = shutil.which(benv[tool]) or benv[tool]
    root = env.Dir(env.subst("$MICROBUILD_BUILD_DIR")).Dir(variant)
    config = root.Dir("config")
    benv["MICROBUILD_BOARD_KEY"] = key
    benv["MICROBUILD_VARIANT_DIR"] = root
    benv["MICROBUILD_TOOLCHAIN"] = setup
    benv.Replace(CPPPATH=[config, str(runtime_dir() / "include")])
    generated = {"mb_board_config.h": board_files.board_config_h(board),
                 "mb_board_init.c": board_files.board_init_c(board)}
    if setup.uses_linker_script:
        generated[f"{board.name}.ld"] = linker_script.linker_script(board)
    elif setup.insert_after and not board.is_host:
        generated[f"{board.name}.additions.ld"] = linker_script.default_script_additions(
            board, setup.insert_after)
    nodes = {}
    for name, text in generated.items():
        nodes[name] = benv._MicroText(config.File(name), benv.Value(text))[0]
    benv["MICROBUILD_CONFIG_FILES"] = nodes
    _boards[key] = (board, benv)
    return benv


_objects: dict[tuple[str, str], Any] = {}


def runtime_object(benv, rel: str):
    """One runtime/ source compiled for the board, into its variant directory (once per board
    and toolchain, however many firmwares use it)."""
    key = (benv["MICROBUILD_BOARD_KEY"], rel)
    if key not in _objects:
        src = runtime_dir() / rel
        obj = benv["MICROBUILD_VARIANT_DIR"].Dir("obj").File(re.sub(r"\.[cS]$", ".o", rel))
        _objects[key] = benv.Object(obj, str(src))[0]
    return _objects[key]


def micro_runtime(env, board, toolchain: str | None = None):
    """[start-up objects..., libmicrobuild.a] for ``board``."""
    benv = board_environment(env, board, toolchain)
    if benv["MICROBUILD_BOARD_KEY"] in _runtimes:  # one library per board and toolchain
        return list(_runtimes[benv["MICROBUILD_BOARD_KEY"]])
    b = board_of(benv)
    root = benv["MICROBUILD_VARIANT_DIR"]
    objects = [runtime_object(benv, rel) for rel in board_files.kernel_sources()]
    objects += [runtime_object(benv, rel) for rel in board_files.driver_sources(b)]
    # The board's own drivers and init code, from its folder (named by kind: two boards' files
    # may share a name).
    objects += [benv.Object(root.Dir("obj").Dir("board").File(f"{kind}_{path.stem}.o"), str(path))[0]
                for kind, path in b.local_sources.items()]
    init = benv["MICROBUILD_CONFIG_FILES"]["mb_board_init.c"]
    objects.append(benv.Object(root.Dir("obj").File("mb_board_init.o"), init)[0])
    library = benv.StaticLibrary(root.File("libmicrobuild.a"), objects)
    startup = [runtime_object(benv, rel) for rel in benv["MICROBUILD_TOOLCHAIN"].startup]
    _runtimes[benv["MICROBUILD_BOARD_KEY"]] = startup + list(library)
    return startup + list(library)
