"""microbuild's SCons tool: ``env.Tool('microbuild')`` adds three builders.

    env.MicroModel('build/kws/kws', 'ds_cnn.tflite')
        .tflite -> kws.h, kws.c, kws_weights.c and kws.json (the compiler's summary); the target's
        base name is the model's C prefix. The emitter declares all four files.
    env.MicroRuntime(board='mps2-an500', toolchain=None)
        the C runtime for one board as a static library (kernels, the board's drivers, its init
        snippet), plus the start-up object that must be linked as an object (its vector table is
        referenced by nothing but the hardware).
    env.MicroFirmware('out/kws', board='mps2-an500', models=['ds_cnn.tflite'], executor='aot')
        everything above, linked with the board's generated linker script -> out/kws.elf, .bin,
        .hex, .map and out/kws.size.json (the fit report); fails with the fit error when a model
        does not fit the board's memory.

The board, its toolchain flags and its generated files (mb_board_config.h, mb_board_init.c, the
linker script) are computed when the SConstruct is read, from the board YAML; each generated file
is written from a Value node, so editing the YAML rebuilds exactly what the change touches.
Set MICROBUILD_VERBOSE=1 in the environment to see full command lines.

The board's environment and runtime library are made in scons_env.py, the steps that check the
firmware fits in scons_fit.py; this module adds the builders and the tool's entry points.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import SCons.Action
import SCons.Builder
import SCons.Script
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from microbuild.compiler import compile_model
from microbuild.compiler.c_names import model_prefix
from microbuild.compiler.variants import Target, selection_from_spec, selection_spec
from microbuild.compiler.workspace_split import WorkspaceRegion
from microbuild.firmware.executors import EXECUTORS as EXECUTOR_TABLE
from microbuild.errors import MicrobuildError
from microbuild.firmware import image_steps, images, rpc_table, toolchains, workspaces
from microbuild.firmware.note import add_note
from microbuild.firmware.scons_env import (board_environment, board_of, micro_runtime, quiet,
                                           report_error, runtime_object)
from microbuild.firmware.scons_executor import executor_table
from microbuild.firmware.scons_fit import check_object_sizes, fit_report_action, link_with_fit_check

_PACKAGE = Path(__file__).resolve().parent.parent
# Changing the compiler's Python code must regenerate models; these files are their dependencies.
_COMPILER_FILES = sorted(str(p) for sub in ("compiler", "model")
                         for p in (_PACKAGE / sub).rglob("*.py"))


# ---- MicroModel ---------------------------------------------------------------------------------
def _model_emitter(target, source, env):
    base = Path(str(target[0]))
    prefix = base.name
    directory = env.Dir(str(base.parent))
    targets = [directory.File(f"{prefix}{suffix}")
               for suffix in (".h", ".c", "_weights.c", ".json")]
    env.Depends(targets, _COMPILER_FILES)
    return targets, source[:1]


def _compile_model(target, source, env):
    prefix = Path(str(target[0])).stem
    try:
        spec = env.get("MICROBUILD_SELECTION")
        selection = selection_from_spec(json.loads(spec)) if spec else None
        # The regions a workspace may be split across (a board listing several), else none.
        split = env.get("MICROBUILD_WORKSPACE_REGIONS")
        regions = [WorkspaceRegion.from_dict(r) for r in json.loads(split)] if split else None
        compiled = compile_model(str(source[0]), prefix=prefix, selection=selection,
                                 workspace_regions=regions)
    except MicrobuildError as err:
        report_error(err, target[0])
        return 1
    out = Path(str(target[0])).parent
    compiled.write(out)
    summary = compiled.summary()
    summary["model"] = str(source[0])
    (out / f"{prefix}.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


# ---- generated text files -------------------------------------------------------------------------
def _write_value(target, source, env):
    Path(str(target[0])).write_text(source[0].get_contents().decode())
    return 0


# ---- MicroFirmware --------------------------------------------------------------------------------
# aot: microbuild's standalone test harness is main (runtime/aot/main.c); rpc: the server the
# host drives (runtime/rpc/); app: the user's own sources hold main and call the models.
# The executors of the shared table (firmware/executors.py), and app: the user's own main().
EXECUTORS = (*EXECUTOR_TABLE, "app")
C_SUFFIXES = (".c",)
CXX_SUFFIXES = (".cpp", ".cc", ".cxx")
ASM_SUFFIXES = (".S", ".s")
SOURCE_SUFFIXES = C_SUFFIXES + CXX_SUFFIXES + ASM_SUFFIXES


def _user_objects(fenv, setup, folder, sources: list[str]) -> tuple[list, bool]:
    """The user's C, C++ and assembly files compiled for the board into ``folder`` (object paths
    follow the sources' paths below their common folder); and whether any is C++."""
    # Strings are relative to the SConstruct's folder, like any SCons path; nodes (Glob) too.
    paths = [Path(fenv.File(str(s) if isinstance(s, (str, Path)) else s).abspath)
             for s in sources]
    for path in paths:
        if path.suffix not in SOURCE_SUFFIXES:
            raise MicrobuildError(f"source {path}: not a C, C++ or assembly file (expected one "
                                  f"of {', '.join(SOURCE_SUFFIXES)})")
        if not path.is_file():
            raise MicrobuildError(f"source {path}: no such file")
    has_cxx = any(p.suffix in CXX_SUFFIXES for p in paths)
    if has_cxx:
        fenv = fenv.Override({"CXX": setup.require_cxx()})
    root = Path(os.path.commonpath([str(p.parent) for p in paths])) if paths else Path("/")
    objects = [fenv.Object(folder.File(str(p.relative_to(root).with_suffix(".o"))), str(p))[0]
               for p in paths]
    return objects, has_cxx


def _defines_main(object_path: str) -> bool | None:
    """Whether a compiled object defines a global ``main``; None when it is not an ELF object
    (then the linker is left to tell)."""
    try:
        with open(object_path, "rb") as f:
            for section in ELFFile(f).iter_sections():
                if isinstance(section, SymbolTableSection):
                    for symbol in section.iter_symbols():
                        if (symbol.name == "main" and symbol["st_shndx"] != "SHN_UNDEF"
                                and symbol["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")):
                            return True
    except (ELFError, OSError):
        return None
    return False


def _check_main(target, source, env):
    """Executor 'app': one of the user's objects must define main (the firmware's entry)."""
    found = [_defines_main(str(s)) for s in source]
    if any(found) or None in found:
        Path(str(target[0])).write_text("main found\n")
        return 0
    looked = ", ".join(str(s.sources[0]) if s.sources else str(s) for s in source)
    report_error(MicrobuildError(
        f"no main() in your sources (executor 'app' makes your main() the firmware); looked in: "
        f"{looked}. Define `int main(void)` in one of them (a C++ file: at namespace scope, "
        f"not static), add the file that has it to `sources:`, or build microbuild's own main "
        f"with --executor aot or rpc"), target[0])
    return 1


def _add_note(target, source, env):
    """Post-link: write .note.microbuild into the ELF (microbuild/firmware/note.py)."""
    board = board_of(env)
    setup = env["MICROBUILD_TOOLCHAIN"]
    try:
        add_note(str(target[0]), board.name, env["MICROBUILD_NOTE_MODELS"],
                 env["MICROBUILD_NOTE_EXECUTOR"],
                 setup.family, env.subst("$OBJCOPY"))
    except MicrobuildError as err:
        report_error(err, target[0])
        return 1
    return 0


def micro_firmware(env, target, board, models, executor: str = "aot", toolchain: str | None = None,
                   inputs: dict[str, str] | None = None, seed: int = 0,
                   rpc_pool: int = rpc_table.DEFAULT_POOL_BYTES, tuning: str | None = None,
                   variants: dict[str, str] | None = None,
                   model_variants: dict[str, dict[str, str]] | None = None,
                   separate_workspace: list[str] | bool = (),
                   sources: list[str] | None = None, include_dirs: list[str] | None = None,
                   model_tuning: dict[str, str] | None = None, no_row_stream: bool = False):
    """Build one firmware. ``models``: .tflite paths (prefix from the file name) or a dict
    prefix -> path. ``executor``: 'aot' (standalone: runs the models on embedded inputs and
    prints the results) or 'rpc' (a server the host drives over the console; see
    docs/rpc-protocol.md). ``inputs``: prefix -> .npy/.npz embedded as that model's input (AOT;
    default: seeded random, saved next to the firmware as <target>.input.npz). ``rpc_pool``: bytes
    of the RPC arena beyond the workspaces, for the host's ALLOC requests.

    Kernel variants: each op gets the heuristic default for the board's CPU, or the winner a
    ``tuning`` log (microbuild tune) measured for that CPU and op signature; ``variants`` forces
    choices in every model ({"CONV_2D": "dsp"}, {"*": "reference"}), ``model_variants`` per
    model prefix (on top of ``variants``); ``model_tuning`` gives a model its own log.
    ``no_row_stream``: every op runs whole (no row-streamed region; the tuner's builds).

    The models share one workspace, the size of the largest (the executors run one model at a
    time), except those ``separate_workspace`` names (prefixes; True: every model); see
    microbuild/firmware/workspaces.py.

    Your application: ``sources`` (C, C++ and assembly files) are compiled with the board's
    flags (C++ with the board's C++ compiler, see toolchains.MCU_CXXFLAGS) and linked in, with
    ``include_dirs`` and every model's generated header on the include path. With
    ``executor='app'`` they hold ``main`` (which calls ``<prefix>_run``) and neither harness is
    linked; with 'aot' or 'rpc' they add code to the harness, and must not define main."""
    _check_executor(executor, sources)
    benv = board_environment(env, board, toolchain)
    b = board_of(benv)
    setup = benv["MICROBUILD_TOOLCHAIN"]
    base = env.File(str(target))
    out_dir = base.dir
    name = base.name
    src = out_dir.Dir(f"{name}.src")
    if not isinstance(models, dict):
        models = {model_prefix(m): m for m in models}
    separate = True if separate_workspace is True else sorted(separate_workspace or ())
    workspaces.check_separate(list(models), separate)
    # The grouping is an input of the fit report.
    grouping = env.Value(json.dumps({"separate": separate}))

    runtime = micro_runtime(env, b, toolchain)
    objects = []
    # The board's environment plus the models' folders on the include path: an override (cheap)
    # rather than a Clone, which costs milliseconds per firmware in a large matrix.
    fenv = benv.Override({"CPPPATH": list(benv["CPPPATH"])
                          + [src.Dir(prefix) for prefix in models]
                          + [env.Dir(str(Path(d).resolve())) for d in include_dirs or []]})
    model_objects, summaries, size_checks = _model_objects(
        env, fenv, src, models, b, {"tuning": tuning, "variants": variants,
                                    "model_variants": model_variants,
                                    "model_tuning": model_tuning, "no_row_stream": no_row_stream})
    objects += model_objects
    table, side_file, executor_sources = _executor_table(
        env, fenv, src, out_dir.File(name), executor, summaries, inputs, seed,
        {"board": b.name, "pool": rpc_pool, "separate": separate})
    if table is not None:
        objects.append(fenv.Object(src.File(Path(str(table)).stem + ".o"), table)[0])
        fenv.Depends(objects[-1], size_checks)  # its workspace arrays have the same limit
    objects += [runtime_object(benv, rel) for rel in executor_sources]
    user_objects, has_cxx = _user_objects(fenv, setup, src.Dir("app"), list(sources or []))
    # The models' code is generated before the user's sources that include its headers.
    fenv.Depends(user_objects, [src.Dir(prefix).File(f"{prefix}.h") for prefix in models])
    objects += user_objects
    link = {}
    if has_cxx and b.is_host:
        link["LINK"] = setup.require_cxx()  # the host's libstdc++, with its own start-up
    elif has_cxx:
        # No libstdc++ for bare-metal targets here: link with the C driver as always, plus the
        # few C++ ABI symbols the compilers' code refers to.
        objects += [runtime_object(benv, rel) for rel in toolchains.CXX_SUPPORT_SOURCES]

    steps = [] if b.is_host else image_steps.steps(b)
    objects += boot_header_objects(fenv, steps, lambda rel: runtime_object(benv, rel), src)

    elf_name = name if b.is_host else f"{name}.elf"
    linkflags = list(setup.linkflags)
    extra = [env.File(lib) for lib in setup.libs]
    # The generated script, or the additions to the toolchain's default one (avr-gcc).
    config_files = benv["MICROBUILD_CONFIG_FILES"]
    ld = config_files.get(f"{b.name}.ld") or config_files.get(f"{b.name}.additions.ld")
    link_map = out_dir.File(f"{name}.map")
    if ld is not None:
        linkflags += [f"-T{ld.abspath}", f"-Wl,-Map,{link_map.abspath}"]
    # Archives after the objects that use them: the linker pulls members in one pass.
    elf = fenv.Program(out_dir.File(elf_name), runtime[:-1] + objects + runtime[-1:] + extra,
                       LINKFLAGS=linkflags, LIBS=list(setup.system_libs), PROGSUFFIX="",
                       MICROBUILD_NOTE_MODELS=list(models), MICROBUILD_NOTE_EXECUTOR=executor,
                       **link)
    # The firmware's note (board, build id, models, executor): added to the ELF right after the
    # link, in the same build step, so the fit report and the .bin/.hex read the final ELF.
    fenv.AddPostAction(elf, SCons.Action.Action(_add_note, None))
    fenv.Depends(elf, fenv.Value(json.dumps(
        {"board": b.name, "models": list(models), "executor": executor,
         "toolchain": setup.family})))
    if ld is not None:
        fenv.Depends(elf, ld)
        fenv.SideEffect(link_map, elf)  # written by the link, removed by `scons -c`
        fenv.Clean(elf, link_map)
    if executor == "app":
        # Before the link: without main the linker only says "undefined reference to `main'".
        main_check = fenv.Command(src.File("app/main.checked"), user_objects,
                                  SCons.Action.Action(_check_main, None))
        fenv.Depends(elf, main_check)
    results = list(elf) + ([side_file] if side_file is not None else [])
    size = fenv.Command(out_dir.File(f"{name}.size.json"), list(elf) + summaries + [grouping],
                        SCons.Action.Action(fit_report_action, "$MICROFITCOMSTR"),
                        MICROBUILD_SEPARATE_WORKSPACE=separate)
    results += size
    results += _image_files(fenv, elf, out_dir, name, b)
    results += image_step_files(fenv, steps, elf, out_dir, name)
    return results


def _check_executor(executor: str, sources: list[str] | None) -> None:
    if executor not in EXECUTORS:
        raise MicrobuildError(f"unknown executor '{executor}'; choose one of: "
                              f"{', '.join(EXECUTORS)}")
    if executor == "app" and not sources:
        raise MicrobuildError("executor 'app' runs your own main(): give the C/C++ files that "
                              "hold it (sources=[...], or `sources:` in microbuild.yaml)")


def _model_objects(env, fenv, src, models: dict[str, str], b, kernels: dict[str, Any]
                   ) -> tuple[list, list, list]:
    """Each model compiled (MicroModel, with its kernel choice as an input) and its two C files
    compiled for the board: (objects, the models' summaries, the object-size checks)."""
    objects, summaries, size_checks = [], [], []
    setup = fenv["MICROBUILD_TOOLCHAIN"]
    # A board listing several workspace regions: each model may be split across them, so the
    # regions and their free bytes are an input of the model's compilation.
    split_spec = workspaces.split_spec(b)
    target_cpu = Target.of_board(b)
    tuning, variants = kernels["tuning"], kernels["variants"]
    model_variants, model_tuning = kernels["model_variants"], kernels["model_tuning"]
    for prefix, path in models.items():
        log = (model_tuning or {}).get(prefix) or tuning
        tuning_file = str(Path(log).resolve()) if log else None
        force = {**(variants or {}), **((model_variants or {}).get(prefix) or {})}
        spec = json.dumps(selection_spec(target_cpu, tuning_file, force,
                                         row_stream=not kernels["no_row_stream"]), sort_keys=True)
        generated = env.MicroModel(src.Dir(prefix).File(prefix), str(path),
                                   MICROBUILD_SELECTION=spec,
                                   MICROBUILD_WORKSPACE_REGIONS=split_spec)
        # The choice of kernels is an input: a new log or forced variant recompiles the model.
        env.Depends(generated, env.Value(spec))
        if split_spec:
            env.Depends(generated, env.Value(split_spec))
        if tuning_file:
            env.Depends(generated, env.File(tuning_file))
        h, c, weights, summary = generated
        summaries.append(summary)
        model_objects = [fenv.Object(src.Dir(prefix).File(Path(str(source)).stem + ".o"),
                                     source)[0] for source in (c, weights)]
        if setup.max_object_bytes:
            check = fenv.Command(src.Dir(prefix).File(f"{prefix}.objects.json"),
                                 [summary, weights, fenv.Value(setup.max_object_bytes)],
                                 SCons.Action.Action(check_object_sizes, "$MICROFITCOMSTR"))
            fenv.Depends(model_objects, check)
            size_checks += check
        objects += model_objects
    return objects, summaries, size_checks


def _executor_table(env, fenv, src, base, executor: str, summaries: list, inputs, seed: int,
                    build: dict[str, Any]) -> tuple[Any, Any, list[str]]:
    """The executor's generated table (the AOT models with their embedded inputs, or the RPC
    table the host reads back), the file beside the firmware that goes with it, and the
    executor's runtime sources: what the executors table (executors.py) says, none for app.
    ``build``: the board's name, the RPC pool, the models with a workspace of their own."""
    if executor == "app":
        return None, None, []
    spec = EXECUTOR_TABLE[executor]
    inputs = {k: str(v) for k, v in (inputs or {}).items()}
    table, *side = executor_table(fenv, src, base, spec, summaries, inputs, seed, build["board"],
                                  build["separate"], build["pool"])
    return table, (side[0] if side else None), spec.sources


def _image_files(fenv, elf, out_dir, name: str, b) -> list:
    """The .bin and .hex objcopy makes of the ELF, or one .bin per region when the loaded bytes
    lie in regions far apart."""
    results = []
    setup = fenv["MICROBUILD_TOOLCHAIN"]
    if setup.objcopy and not b.is_host:
        per_region = images.region_bin_names(name, b)
        formats = ((".hex", "ihex"),) if per_region else ((".bin", "binary"), (".hex", "ihex"))
        for suffix, fmt in formats:
            results += fenv.Command(
                out_dir.File(f"{name}{suffix}"), elf,
                SCons.Action.Action(f"$OBJCOPY $OBJCOPYFLAGS -O {fmt} $SOURCE $TARGET",
                                    "$MICROOBJCOPYCOMSTR"))
        if per_region:
            # Loaded bytes in regions far apart: one .bin per region, not one filling the gap.
            results += fenv.Command(
                [out_dir.File(f) for f in per_region.values()], elf,
                SCons.Action.Action(_region_bins, "$MICROIMAGECOMSTR"),
                MICROBUILD_REGION_BINS=per_region)
    return results


def boot_header_objects(env, steps, assemble, folder) -> list:
    """The objects of the steps' boot headers (RP2040 boot2): each header's source assembled for
    the board (``assemble(rel)``: its object node), made into a C array in its own section,
    which the generated linker script puts first in the boot region. Shared by microbuild's own
    build and the generated SCons and PlatformIO projects, so their images boot alike."""
    objects = []
    for step in steps:
        if step.header_source:
            header_c = env.Command(
                folder.File(f"mb_{step.name}.c"), assemble(step.header_source),
                SCons.Action.Action(_header_c, "$MICROGENCOMSTR"),
                MICROBUILD_IMAGE_STEP=step)
            objects.append(env.Object(folder.File(f"mb_{step.name}.o"), header_c)[0])
    return objects


def image_step_files(env, steps, elf, out_dir, name: str) -> list:
    """The files the steps write after the link (a .uf2, an ESP app image, a signed MCUboot
    image) beside firmware ``name`` in ``out_dir``."""
    results = []
    for step in steps:
        outputs = step.outputs(name)
        if outputs:
            results += env.Command(
                [out_dir.File(f) for f in outputs], elf,
                SCons.Action.Action(_image_step, None),  # it prints its own IMAGE line
                MICROBUILD_IMAGE_STEP=step)
    return results


def _header_c(target, source, env):
    """The boot header's C file from its assembled object's code (.text, position-independent:
    the object has no relocations, so its bytes are final)."""
    step = env["MICROBUILD_IMAGE_STEP"]
    raw = Path(str(target[0])).with_suffix(".raw")
    command = [env.subst("$OBJCOPY"), "-O", "binary", "-j", ".text", str(source[0]), str(raw)]
    result = subprocess.run(command, capture_output=True, text=True, env=env["ENV"])
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        return result.returncode
    try:
        Path(str(target[0])).write_text(step.header_c(raw.read_bytes()))
    except MicrobuildError as err:
        report_error(err, target[0])
        return 1
    return 0


def _region_bins(target, source, env):
    board = board_of(env)
    files = {region: Path(str(t)) for region, t in
             zip(env["MICROBUILD_REGION_BINS"], target)}
    try:
        print(f"  IMAGE   {images.write_region_bins(str(source[0]), board, files)}")
    except MicrobuildError as err:
        report_error(err, target[0])
        return 1
    return 0


def _image_step(target, source, env):
    step = env["MICROBUILD_IMAGE_STEP"]
    try:
        print(f"  IMAGE   {step.run(Path(str(source[0])), [Path(str(t)) for t in target])}")
    except MicrobuildError as err:
        report_error(err, target[0])
        return 1
    return 0


# ---- the tool ---------------------------------------------------------------------------------------
def generate(env):
    env.SetDefault(MICROBUILD_BUILD_DIR="#build")
    env["BUILDERS"]["MicroModel"] = SCons.Builder.Builder(
        action=SCons.Action.Action(_compile_model, "$MICROMODELCOMSTR"),
        emitter=_model_emitter, src_suffix=".tflite")
    env["BUILDERS"]["_MicroText"] = SCons.Builder.Builder(
        action=SCons.Action.Action(_write_value, "$MICROGENCOMSTR"))
    env.AddMethod(micro_runtime, "MicroRuntime")
    env.AddMethod(micro_firmware, "MicroFirmware")
    env.AddMethod(board_environment, "MicroBoardEnvironment")
    env["MB_LINKLINE"] = "$LINK -o $TARGET $LINKFLAGS $SOURCES $_LIBDIRFLAGS $_LIBFLAGS"
    env["LINKCOM"] = SCons.Action.Action(link_with_fit_check, "$LINKCOMSTR")
    if quiet():
        env.SetDefault(CCCOMSTR="  CC      $TARGET", ASPPCOMSTR="  AS      $TARGET",
                       ASCOMSTR="  AS      $TARGET", ARCOMSTR="  AR      $TARGET",
                       RANLIBCOMSTR="  RANLIB  $TARGET", LINKCOMSTR="  LINK    $TARGET",
                       MICROMODELCOMSTR="  MODEL   $SOURCE -> ${TARGETS[1]}",
                       MICROGENCOMSTR="  GEN     $TARGET", MICROAOTCOMSTR="  GEN     $TARGET",
                       MICROFITCOMSTR="  FIT     $TARGET",
                       MICROOBJCOPYCOMSTR="  OBJCOPY $TARGET", MICROIMAGECOMSTR="")
    else:
        env.SetDefault(LINKCOMSTR="$MB_LINKLINE")


def exists(env):
    return True
