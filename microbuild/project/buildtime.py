"""What generated SCons and PlatformIO projects call while they build (both are SCons inside).

Only a project's build scripts import this module; everything comes from the board YAML and the
models named in the project, through the same pieces `microbuild build` uses: the SCons tool's
MicroModel and MicroBoardEnvironment, build/board_files.py, build/linker_script.py,
build/toolchains.py and build/aot.py.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any, Sequence

from microbuild.boards import Board, resolve_board
from microbuild.compiler.c_names import model_prefix
from microbuild.compiler.forced_variants import parse_variants
from microbuild.compiler.variants import selection_spec, Target
from microbuild.errors import MicrobuildError
from microbuild.firmware import board_files, image_steps, linker_script, scons_executor, workspaces
from microbuild.firmware.fit import TABLE_HEADER, analyze_elf, fit_error
from microbuild.firmware.scons_fit import write_fit_report
from microbuild.firmware.scons_tool import boot_header_objects, image_step_files
from microbuild.firmware.toolchains import toolchain_setup
from microbuild.paths import runtime_dir
from microbuild.blob.host import THUNKS
from microbuild.project import table
from microbuild.project.executors import compiled_runtime_sources, get_executor
from microbuild.project.files import GENERATED_DIR
from microbuild.project.readme import MICROBUILD_VARIABLE
from microbuild.project.run_and_flash import flash_commands, run_command



def fail(err: MicrobuildError) -> None:
    """Stop an SCons run that is still reading its scripts with microbuild's message (no Python
    traceback)."""
    import SCons.Script

    print(f"microbuild: error: {err}", file=sys.stderr)
    SCons.Script.Exit(2)


def load_board(path: str | Path) -> Board:
    return resolve_board(str(path))


def model_prefixes(models: Sequence[str]) -> dict[str, str]:
    """C prefix -> .tflite path, prefixes from the file names as `microbuild build` makes them."""
    named: dict[str, str] = {}
    for path in models:
        prefix = model_prefix(path)
        while prefix in named:
            prefix += "_"
        named[prefix] = str(path)
    return named


def write_if_changed(path: Path, text: str) -> Path:
    """Write ``text`` unless the file already holds it (so nothing depending on it rebuilds)."""
    path = Path(path)
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


def board_files_into(board: Board, uses_linker_script: bool, insert_after: str | None,
                     folder: Path) -> dict[str, Path]:
    """Write mb_board_config.h, mb_board_init.c and the linker script (or the additions to the
    toolchain's own script) for ``board`` into ``folder``; returns {"config", "init", "ld"}
    ("ld" absent on the host)."""
    folder = Path(folder)
    written = {
        "config": write_if_changed(folder / "mb_board_config.h", board_files.board_config_h(board)),
        "init": write_if_changed(folder / "mb_board_init.c", board_files.board_init_c(board)),
    }
    if uses_linker_script:
        written["ld"] = write_if_changed(folder / f"{board.name}.ld",
                                         linker_script.linker_script(board))
    elif insert_after and not board.is_host:
        written["ld"] = write_if_changed(folder / f"{board.name}.additions.ld",
                                         linker_script.default_script_additions(board, insert_after))
    return written


# ---- the executor's table -------------------------------------------------------------------------
def executor_table(env, folder: str, summaries: list, executor: str, inputs: dict[str, str],
                   seed: int, firmware: str, board: str,
                   separate: list[str] | bool = ()) -> list:
    """An SCons Command that writes the executor's table (e.g. mb_aot_models.c) into ``folder``
    from the models' summaries (MicroModel's .json), embedding ``inputs`` (prefix -> .npy/.npz)
    or seeded random inputs, and next to ``firmware`` (its path without suffix) the .input.npz
    of what was embedded (AOT) or the .rpc.json a host drives it with (RPC): the command
    microbuild's own build makes (firmware/scons_executor.py)."""
    return scons_executor.executor_table(env, folder, firmware, get_executor(executor), summaries,
                                         inputs, seed, board, separate)


# ---- an SCons project -----------------------------------------------------------------------------
def _fit_report(target, source, env):
    return write_fit_report(str(source[0]), env["MICROBUILD_PROJECT_BOARD"], target[0])


def _run(target, source, env):
    import subprocess

    board = env["MICROBUILD_PROJECT_BOARD"]
    command = run_command(board, str(source[0]))
    if env.get("MICROBUILD_RUN_BLOB"):
        # A table firmware runs the first model's blob (the host: through a shell pipeline).
        command = table.run_words(board, env["MICROBUILD_RUN_BLOB"], command)
        print(" ".join(command), flush=True)
        return subprocess.call(" ".join(command), shell=True, cwd=env.Dir("#").abspath)
    print(" ".join(command), flush=True)
    return subprocess.call(command)


def _print_size(target, source, env):
    """`scons size`: the fit report as a table, one row per memory region."""
    report = analyze_elf(str(source[0]), env["MICROBUILD_PROJECT_BOARD"])
    rows = [TABLE_HEADER, *report.table_rows()]
    widths = [max(len(str(row[k])) for row in rows) for k in range(len(TABLE_HEADER))]
    for row in rows:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


def _compiled_models(env, obj, model_dir: str, models: dict[str, str], selection, split,
                     tuning: str | None, summaries: list) -> list:
    """The objects of the models compiled to C at build time (MicroModel), rebuilt when the kernel
    selection, the workspace split or the tuning log change; their summaries go to ``summaries``
    (the executor's table is made from them)."""
    objects = []
    for prefix, path in models.items():
        _, c, weights, summary = env.MicroModel(f"{model_dir}/{prefix}/{prefix}", path,
                                                MICROBUILD_SELECTION=selection,
                                                MICROBUILD_WORKSPACE_REGIONS=split)
        env.Depends([c, weights, summary], env.Value(selection))
        if split:
            env.Depends([c, weights, summary], env.Value(split))
        if tuning:
            env.Depends([c, weights, summary], tuning)
        summaries.append(summary)
        objects += [obj(c, f"model/{prefix}/{prefix}.c"),
                    obj(weights, f"model/{prefix}/{prefix}_weights.c")]
    return objects


def scons_firmware(env, target: str, board: str, models: dict[str, str], sources: Sequence,
                   runtime: str, executor: str = "aot", toolchain: str | None = None,
                   inputs: dict[str, str] | None = None, seed: int = 0,
                   build_dir: str = "build", tuning: str | None = None,
                   variants: dict[str, str] | None = None,
                   separate_workspace: list[str] | bool = (),
                   defines: Sequence = ()) -> dict[str, Any]:
    """Build ``target`` (.elf, or the executable on the host) for the board YAML ``board``:
    the project's ``sources``, the models (prefix -> .tflite, compiled by the microbuild tool's
    MicroModel at build time), the executor's table, and the runtime files the board needs from
    ``runtime``. ``tuning`` (a `microbuild tune` log) and ``variants`` ({"CONV_2D": "dsp"}) choose
    the kernel variants; by default each op gets the default for the board's CPU. ``defines``
    are preprocessor definitions for every source (MB_SELF_TEST).
    Returns the nodes: {"elf", "bin", "hex", "size"} (files) and the aliases {"run", "flash",
    "size_report"} (`scons run`, `scons flash`, `scons size`; absent ones omitted)."""
    import SCons.Action

    try:
        b = load_board(board)
        is_table = executor == table.TABLE
        # A table project's models are data (model/*.mbm, packed when it was generated): its
        # kernel set comes from the firmware note the generator wrote.
        note = table.read_project_note(env.File(f"#{table.NOTE_FILE}").abspath) \
            if is_table else None
        spec = table.executor_from_note(b, note) if is_table else get_executor(executor)
        benv = env.MicroBoardEnvironment(board, toolchain)
    except MicrobuildError as err:
        fail(err)
    setup = benv["MICROBUILD_TOOLCHAIN"]
    config = benv["MICROBUILD_CONFIG_FILES"]
    model_dir = f"{build_dir}/model"
    benv = benv.Clone(MICROBUILD_PROJECT_BOARD=b)
    benv.Append(CPPDEFINES=list(defines))
    # The project's runtime copy instead of the installation's.
    benv.Replace(CPPPATH=[config["mb_board_config.h"].dir, f"{runtime}/include"]
                 + [benv.Dir(f"{model_dir}/{prefix}") for prefix in models])
    objects: list = []
    summaries: list = []

    def obj(source, rel: str):
        stem = rel.rsplit(".", 1)[0]
        return benv.Object(f"{build_dir}/obj/{stem}.o", source)[0]

    for node in sources:
        objects.append(obj(node, str(node)))
    try:
        selection = model_selection(b, str(Path(tuning).resolve()) if tuning else None, variants)
    except MicrobuildError as err:
        fail(err)

    # A board listing several workspace regions: a model too large for the first is split
    # across them, as in microbuild's own build (compiler/workspace_split.py).
    split = workspaces.split_spec(b)
    if is_table:
        benv.Append(CPPPATH=[benv.Dir(f"#{GENERATED_DIR}")], CCFLAGS=table.build_flags(b, note))
        objects.append(obj(f"#{GENERATED_DIR}/{THUNKS}", f"{GENERATED_DIR}/{THUNKS}"))
    else:
        objects += _compiled_models(env, obj, model_dir, models, selection, split, tuning,
                                    summaries)
        models_table = executor_table(benv, model_dir, summaries, executor, inputs or {}, seed,
                                      firmware=str(Path(target).with_suffix("")), board=b.name,
                                      separate=separate_workspace)
        objects.append(obj(models_table[0], f"model/{spec.table_file}"))
    for rel in compiled_runtime_sources(b, toolchain, spec):
        objects.append(obj(f"{runtime}/{rel}", f"runtime/{rel}"))
    # The image steps of microbuild's own build: a boot header (RP2040 boot2 with its CRC) linked
    # first in flash, and the files made after the link (.uf2, ...), so the image boots alike.
    steps = [] if b.is_host else image_steps.steps(b)
    objects += boot_header_objects(benv, steps,
                                   lambda rel: obj(f"{runtime}/{rel}", f"runtime/{rel}"),
                                   benv.Dir(f"{build_dir}/board"))
    objects.append(obj(config["mb_board_init.c"], "board/mb_board_init.c"))
    # The board's own drivers and init code (beside its YAML, board/src/ in a project).
    for kind, path in b.local_sources.items():
        objects.append(obj(str(path), f"board/{kind}_{path.stem}.c"))

    ld = config.get(f"{b.name}.ld") or config.get(f"{b.name}.additions.ld")
    elf_path = target if b.is_host else f"{target}.elf"
    linkflags = list(setup.linkflags)
    if ld is not None:
        linkflags += [f"-T{ld.abspath}", f"-Wl,-Map,{benv.File(target + '.map').abspath}"]
    elf = benv.Program(elf_path, objects + [benv.File(lib) for lib in setup.libs],
                       LINKFLAGS=linkflags, LIBS=list(setup.system_libs), PROGSUFFIX="")
    if ld is not None:
        benv.Depends(elf, ld)
        benv.SideEffect(f"{target}.map", elf)
    if is_table:
        # `microbuild pack --firmware` reads the kernel set from the note.
        benv.AddPostAction(elf, table.add_note_command(setup.objcopy or "objcopy", "$TARGET"))
        benv.Depends(elf, f"#{table.NOTE_FILE}")
    nodes: dict[str, Any] = {"elf": elf[0]}
    nodes["size"] = benv.Command(f"{target}.size.json", elf,
                                 SCons.Action.Action(_fit_report, "$MICROFITCOMSTR"))[0]
    if setup.objcopy and not b.is_host:
        for suffix, fmt in ((".bin", "binary"), (".hex", "ihex")):
            nodes[suffix[1:]] = benv.Command(
                f"{target}{suffix}", elf,
                SCons.Action.Action(f"$OBJCOPY $OBJCOPYFLAGS -O {fmt} $SOURCE $TARGET",
                                    "$MICROOBJCOPYCOMSTR"))[0]
    for node in image_step_files(benv, steps, elf, benv.File(target).dir,
                                 Path(target).name):
        nodes[Path(str(node)).suffix.lstrip(".")] = node
    if run_command(b, "x") is not None:
        benv = benv.Clone(MICROBUILD_RUN_BLOB=next(iter(models)) if is_table else "")
        nodes["run"] = benv.AlwaysBuild(benv.Alias("run", elf, SCons.Action.Action(_run, None)))
    # `scons flash`: the board's first flash tool that one command line drives, the command
    # `make flash` and `microbuild flash` run; `scons size`: the fit report.
    tools = flash_commands(b, f"{target}.elf", f"{target}.bin", f"{target}.hex")
    if tools and not b.is_host:
        images = [node for key, node in nodes.items() if key in ("elf", "bin", "hex")]
        nodes["flash"] = benv.AlwaysBuild(benv.Alias("flash", images, tools[0][1]))
    nodes["size_report"] = benv.AlwaysBuild(benv.Alias(
        "size", elf, SCons.Action.Action(_print_size, None)))
    return nodes


# ---- a PlatformIO project -------------------------------------------------------------------------
def pio_options(env) -> dict[str, Any]:
    """The custom_microbuild_* options of the environment being built (platformio.ini)."""
    project = Path(env.subst("$PROJECT_DIR"))

    def option(name: str, default=None):
        value = env.GetProjectOption(f"custom_microbuild_{name}", default)
        return value.strip() if isinstance(value, str) else value

    def path(text: str | None) -> str | None:
        return str(project / text) if text else None

    board = option("board")
    if not board:
        raise MicrobuildError("set custom_microbuild_board in platformio.ini to the board's "
                              "microbuild YAML file")
    models = [m for m in (option("models", "") or "").split() if m]
    input_file = option("input")
    return {"board": path(board), "runtime": path(option("runtime")) or _installed_runtime(),
            "toolchain": option("toolchain") or None, "models": [path(m) for m in models],
            "input": path(input_file), "seed": int(option("seed", 0) or 0),
            "executor": option("executor", "aot") or "aot",
            "tuning": path(option("tuning") or None),
            "variants": _variants(option("variants", "") or ""),
            "separate_workspace": _separate(option("separate_workspace", "") or "")}


def _separate(text: str) -> list[str] | bool:
    """custom_microbuild_separate_workspace: C prefixes, or * for every model."""
    items = text.split()
    return True if "*" in items else items


def _variants(text: str) -> dict[str, str]:
    return parse_variants(text.split())


def model_selection(board: Board, tuning: str | None, variants: dict[str, str] | None) -> str:
    """The MICROBUILD_SELECTION a project's MicroModel builds with: the board's CPU, the
    project's tuning log and forced variants (the same choice `microbuild build` makes)."""
    if tuning:
        from microbuild.tuning import TuningLog

        TuningLog.load(tuning)  # a missing or broken log is reported before the build starts
    return json.dumps(selection_spec(Target.of_board(board), tuning, variants or {}),
                      sort_keys=True)


def _installed_runtime() -> str:
    return str(runtime_dir())


def _with_path(path: str | None):
    """A context manager putting ``path`` on PATH (PlatformIO's toolchain packages) for a while."""
    import contextlib

    @contextlib.contextmanager
    def manager():
        old = os.environ.get("PATH")
        if path:
            os.environ["PATH"] = path
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("PATH", None)
            else:
                os.environ["PATH"] = old
    return manager()


def _pio_table(env, board: Board, options: dict[str, Any]) -> None:
    """A table project's PlatformIO build: the kernel set its generated/firmware.note names (no
    model is compiled: they are model/*.mbm), the thunks and the table runner; the note is added
    to the program after linking, for `microbuild pack --firmware`."""
    project = Path(env.subst("$PROJECT_DIR"))
    note_file = project / table.NOTE_FILE
    try:
        note = table.read_project_note(note_file)
    except (OSError, ValueError, KeyError) as err:
        fail(MicrobuildError(f"{note_file} cannot be read ({err}): generate the project again"))
    executor = table.executor_from_note(board, note)
    runtime = options["runtime"]
    env.Append(CPPPATH=[str(project / GENERATED_DIR), f"{runtime}/include"],
               CCFLAGS=table.build_flags(board, note))
    sources = [(str(project / GENERATED_DIR / THUNKS), f"{GENERATED_DIR}/{THUNKS}")]
    sources += [(f"{runtime}/{rel}", f"runtime/{rel}")
                for rel in compiled_runtime_sources(board, options["toolchain"], executor)
                if rel.startswith("kernels/") or rel in executor.runtime_sources]
    env.Append(PIOBUILDFILES=_pio_objects(env, sources))
    # The program's name as microbuild's platform (pio_board) and the official ones make it;
    # PROGNAME is not set yet when this pre: script runs.
    program = env.File(env.subst("$BUILD_DIR/firmware" + ("" if board.is_host else ".elf")))
    env.AddPostAction(program, table.add_note_command("$OBJCOPY", "$TARGET", note_file))
    env.Depends(program, str(note_file))


def _pio_objects(env, sources: list[tuple[Any, str]]) -> list:
    return [env.Object(env.subst(f"$BUILD_DIR/microbuild/{rel.rsplit('.', 1)[0]}.o"), src)[0]
            for src, rel in sources]


def pio_board(env, board: Board, setup, runtime: str, replace_tools: bool) -> dict[str, Path]:
    """Everything of the board a PlatformIO build needs from microbuild, added to ``env``: the
    compiler and flags (``replace_tools``: microbuild's platform; else flags are appended to an
    official platform's), the board files generated from the YAML, start-up code, drivers and
    print helpers. Returns the generated board files."""
    folder = Path(env.subst("$BUILD_DIR")) / "microbuild" / "board"
    generated = board_files_into(board, setup.uses_linker_script, setup.insert_after, folder)
    if replace_tools:
        env.Replace(CC=setup.cc, AS=setup.cc, AR=setup.ar, RANLIB=setup.ranlib, LINK=setup.cc,
                    OBJCOPY=setup.objcopy or "objcopy", PROGNAME="firmware",
                    PROGSUFFIX="" if board.is_host else ".elf")

    def flags(values: list[str]) -> list[str]:
        # An official platform picks the C library itself (ststm32: --specs=nano.specs
        # --specs=nosys.specs); GCC refuses a spec file given twice.
        return [f for f in values if replace_tools or not f.startswith("--specs=")]

    env.Append(CCFLAGS=flags(setup.cflags), ASFLAGS=flags(setup.asflags),
               ASPPFLAGS=flags(setup.asflags), LINKFLAGS=flags(setup.linkflags),
               CPPDEFINES=list(setup.cppdefines),
               LIBS=list(setup.libs) + list(setup.system_libs),
               CPPPATH=[str(folder), f"{runtime}/include"])
    if "ld" in generated:
        # -Wl,-T: PlatformIO then adds no -T of its own (the official board's default script).
        env.Append(LINKFLAGS=[f"-Wl,-T,{generated['ld']}"])
    rels = setup.startup + board_files.driver_sources(board)
    sources = [(f"{runtime}/{rel}", f"runtime/{rel}") for rel in rels]
    sources.append((str(generated["init"]), "board/mb_board_init.c"))
    # The board's own drivers and init code (beside its YAML, board/src/ in a project).
    sources += [(str(path), f"board/{kind}_{path.stem}.c")
                for kind, path in board.local_sources.items()]
    env.Append(PIOBUILDFILES=_pio_objects(env, sources))
    return generated


def _pio_fit(target, source, env):
    """After linking: the fit report (firmware.size.json), an error when it does not fit. A
    module-level function without closure: SCons hashes an action's code into the target's
    signature, and a closure over the board would relink on every run."""
    report = analyze_elf(str(target[0]), load_board(env["MICROBUILD_PIO_BOARD"]))
    Path(str(target[0])).with_suffix(".size.json").write_text(
        json.dumps(report.to_dict(), indent=1) + "\n")
    if not report.fits:
        print(f"microbuild: error: {fit_error(report)}", file=sys.stderr)
        return 1
    return 0


def pio_platform(env) -> None:
    """microbuild's PlatformIO platform (its builder/main.py calls this): builds the project for
    the board YAML named by custom_microbuild_board with the toolchain installed on this machine,
    checks that it fits the board's memory, and adds the `exec` target (emulated boards and the
    host: run it) or `upload` (real boards: the board's first flash tool)."""
    import subprocess

    from SCons.Script import Default

    try:
        options = pio_options(env)
        board = load_board(options["board"])
        setup = toolchain_setup(board, options["toolchain"])
    except MicrobuildError as err:
        fail(err)
    pio_board(env, board, setup, options["runtime"], replace_tools=True)
    # microbuild's own image steps: the boot header (RP2040 boot2 + CRC) first in flash, and
    # the files made after the link (.uf2, ...), as in microbuild's build.
    steps = [] if board.is_host else image_steps.steps(board)
    runtime = options["runtime"]
    # PlatformIO passes both ASFLAGS and ASPPFLAGS to a .S, and GCC refuses a spec file given
    # twice; the header is bare code that links no C library, so it goes without.
    header_env = env.Clone()
    header_env.Replace(ASPPFLAGS=[f for f in env["ASPPFLAGS"] if not str(f).startswith("--specs=")])
    env.Append(PIOBUILDFILES=boot_header_objects(
        header_env, steps,
        lambda rel: _pio_objects(header_env, [(f"{runtime}/{rel}", f"runtime/{rel}")])[0],
        env.Dir("$BUILD_DIR/microbuild/board")))
    program = env.BuildProgram()
    env["MICROBUILD_PIO_BOARD"] = options["board"]
    env.AddPostAction(program, env.VerboseAction(_pio_fit,
                                                 "Checking that it fits the board's memory"))
    outputs = [program]
    if setup.objcopy and not board.is_host:
        for suffix, fmt in ((".bin", "binary"), (".hex", "ihex")):
            outputs += env.Command(f"$BUILD_DIR/firmware{suffix}", program,
                                   env.VerboseAction(f"$OBJCOPY -O {fmt} $SOURCE $TARGET",
                                                     "Writing $TARGET"))
    outputs += image_step_files(env, steps, program, env.Dir("$BUILD_DIR"), "firmware")
    Default(outputs)
    command = run_command(board, "FIRMWARE")
    if command is not None:
        def run(target, source, env):
            line = run_command(board, str(source[0]))
            print(" ".join(line), flush=True)
            return subprocess.call(line)
        env.AddPlatformTarget("exec", program, env.VerboseAction(run, "Running $SOURCE"),
                              "Run", "run the firmware in its emulator (or on the host)")
    else:
        build = env.subst("$BUILD_DIR")
        tools = flash_commands(board, f"{build}/firmware.elf", f"{build}/firmware.bin",
                               f"{build}/firmware.hex")
        if tools:
            env.AddPlatformTarget("upload", outputs, env.VerboseAction(tools[0][1], tools[0][1]),
                                  "Upload", f"flash the board with {tools[0][0]}")


def pio_regenerate_target(env) -> None:
    """`pio run -t regenerate`: the project generated again, in its folder, by the command in
    custom_microbuild_command (the Python that generated it) or $MICROBUILD."""
    arguments = env.GetProjectOption("custom_microbuild_regenerate", "").strip()
    if not arguments:
        return
    runner = (os.environ.get(MICROBUILD_VARIABLE)
              or env.GetProjectOption("custom_microbuild_command", "").strip())
    command = f"cd {shlex.quote(env.subst('$PROJECT_DIR'))} && {runner} {arguments}"
    env.AddCustomTarget("regenerate", None, command, title="Regenerate",
                        description="microbuild generate again, in this folder")


def pio_models(env) -> None:
    """The extra script (pre:) of a generated PlatformIO project: compiles the models with the
    microbuild SCons tool's MicroModel during the build, generates the executor's table,
    and adds them, the kernels and (for an official platform, which knows the chip but not
    microbuild's runtime) the board's start-up code, drivers and flags to the build."""
    import microbuild

    pio_regenerate_target(env)  # first: it must work even when the rest of the project does not
    try:
        options = pio_options(env)
        board = load_board(options["board"])
        executor = get_executor(options["executor"])
        if not options["models"]:
            raise MicrobuildError("custom_microbuild_models in platformio.ini names no .tflite")
        for path in options["models"] + ([options["input"]] if options["input"] else []):
            if not Path(path).is_file():
                raise MicrobuildError(f"{path}: no such file (named in platformio.ini)")
        runtime = options["runtime"]
        if env["PIOPLATFORM"] != "microbuild":
            # The official platform's toolchain package is on env's PATH.
            with _with_path(env["ENV"].get("PATH")):
                setup = toolchain_setup(board, options["toolchain"])
            pio_board(env, board, setup, runtime, replace_tools=False)
    except MicrobuildError as err:
        fail(err)
    if executor.name == table.TABLE:
        _pio_table(env, board, options)
        return

    tool = env.Clone(tools=["microbuild"], toolpath=[microbuild.SCONS_TOOLPATH])
    build = env.subst("$BUILD_DIR/microbuild")
    models = model_prefixes(options["models"])
    summaries, sources = [], []
    try:
        selection = model_selection(board, options["tuning"], options["variants"])
    except MicrobuildError as err:
        fail(err)
    for prefix, path in models.items():
        _, c, weights, summary = tool.MicroModel(f"{build}/model/{prefix}/{prefix}", path,
                                                 MICROBUILD_SELECTION=selection)
        tool.Depends([c, weights, summary], tool.Value(selection))
        if options["tuning"]:
            tool.Depends([c, weights, summary], options["tuning"])
        summaries.append(summary)
        env.Append(CPPPATH=[f"{build}/model/{prefix}"])
        sources += [(c, f"model/{prefix}/{prefix}.c"),
                    (weights, f"model/{prefix}/{prefix}_weights.c")]
    inputs = {}
    if options["input"]:
        if len(models) != 1:
            fail(MicrobuildError("custom_microbuild_input goes with a single model"))
        inputs = {next(iter(models)): options["input"]}
    models_table = executor_table(tool, f"{build}/model", summaries, executor.name, inputs,
                                  options["seed"], firmware=f"{build}/firmware",
                                  board=board.name, separate=options["separate_workspace"])
    sources.append((models_table[0], f"model/{executor.table_file}"))
    runtime_sources = [rel for rel in compiled_runtime_sources(board, options["toolchain"], executor)
                       if rel.startswith("kernels/") or rel in executor.runtime_sources
                       or rel == executor.self_test]
    sources += [(f"{runtime}/{rel}", f"runtime/{rel}") for rel in runtime_sources]
    env.Append(CPPPATH=[f"{runtime}/include"])
    env.Append(PIOBUILDFILES=_pio_objects(env, sources))
