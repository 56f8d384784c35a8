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
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import SCons.Action
import SCons.Builder
import SCons.Script

from microbuild.boards import Board, load_board, load_board_file
from microbuild.build import aot, board_files, linker_script, toolchains
from microbuild.errors import MicrobuildError
from microbuild.paths import runtime_dir

_PACKAGE = Path(__file__).resolve().parent.parent
# Changing the compiler's Python code must regenerate models; these files are their dependencies.
_COMPILER_FILES = sorted(str(p) for sub in ("compiler", "model")
                         for p in (_PACKAGE / sub).rglob("*.py"))
_C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
               "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
               "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
               "switch", "typedef", "union", "unsigned", "void", "volatile", "while"}

_boards: dict[str, tuple[Board, Any]] = {}  # key -> (board, its SCons environment)


# ---- reporting errors --------------------------------------------------------------------------
def report_error(err: MicrobuildError) -> None:
    """Print a user's error for SCons' output; the microbuild CLI also reads it back as JSON."""
    print(f"microbuild: error: {err}", file=sys.stderr)
    if os.environ.get("MICROBUILD_ERROR_PROTOCOL"):
        record = {"kind": type(err).__name__, "message": str(err)}
        print("MICROBUILD-ERROR " + json.dumps(record), file=sys.stderr)
    sys.stderr.flush()


def _quiet() -> bool:
    return not os.environ.get("MICROBUILD_VERBOSE")


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
    from microbuild.compiler import compile_model

    prefix = Path(str(target[0])).stem
    try:
        compiled = compile_model(str(source[0]), prefix=prefix)
    except MicrobuildError as err:
        report_error(err)
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


# ---- the board's environment ------------------------------------------------------------------------
def _resolve_board(board: str | Path | Board) -> Board:
    if isinstance(board, Board):
        return board
    text = str(board)
    if text.endswith((".yaml", ".yml")) or os.sep in text:
        return load_board_file(Path(text))
    return load_board(text)


def board_environment(env, board, toolchain: str | None = None):
    """A clone of ``env`` set up to compile for ``board`` (name, YAML path or Board) with its
    default toolchain or the family ``toolchain``. Made once per (board, toolchain)."""
    board = _resolve_board(board)
    setup = toolchains.toolchain_setup(board, toolchain)
    default = board.toolchain.family == setup.family
    variant = board.name if default else f"{board.name}+{setup.family}"
    key = f"{id(env)}:{variant}:{json.dumps(board.data, sort_keys=True)}"
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
    nodes = {}
    for name, text in generated.items():
        nodes[name] = benv._MicroText(config.File(name), benv.Value(text))[0]
    benv["MICROBUILD_CONFIG_FILES"] = nodes
    _boards[key] = (board, benv)
    return benv


def _board_of(benv) -> Board:
    return _boards[benv["MICROBUILD_BOARD_KEY"]][0]


def _object(benv, rel: str):
    """One runtime/ source compiled for the board, into its variant directory."""
    src = runtime_dir() / rel
    obj = benv["MICROBUILD_VARIANT_DIR"].Dir("obj").File(re.sub(r"\.[cS]$", ".o", rel))
    return benv.Object(obj, str(src))[0]


# ---- MicroRuntime ---------------------------------------------------------------------------------
def micro_runtime(env, board, toolchain: str | None = None):
    """[start-up objects..., libmicrobuild.a] for ``board``."""
    benv = board_environment(env, board, toolchain)
    b = _board_of(benv)
    root = benv["MICROBUILD_VARIANT_DIR"]
    objects = [_object(benv, rel) for rel in board_files.kernel_sources()]
    objects += [_object(benv, rel) for rel in board_files.driver_sources(b)]
    init = benv["MICROBUILD_CONFIG_FILES"]["mb_board_init.c"]
    objects.append(benv.Object(root.Dir("obj").File("mb_board_init.o"), init)[0])
    library = benv.StaticLibrary(root.File("libmicrobuild.a"), objects)
    startup = [_object(benv, rel) for rel in benv["MICROBUILD_TOOLCHAIN"].startup]
    return startup + list(library)


# ---- MicroFirmware --------------------------------------------------------------------------------
def model_prefix(path: str | Path) -> str:
    """A C prefix from a model's file name: ds_cnn.tflite -> ds_cnn, 2-layer.tflite -> m_2_layer."""
    stem = re.sub(r"[^a-z0-9_]", "_", Path(path).stem.lower()) or "model"
    if stem[0].isdigit():
        stem = "m_" + stem
    return stem + "_model" if stem in _C_KEYWORDS else stem


def _aot_table(target, source, env):
    import numpy as np

    from microbuild.compiler.codegen import TensorSpec
    from microbuild.tensor_files import load_inputs, random_inputs

    summaries = [json.loads(Path(str(s)).read_text()) for s in source
                 if str(s).endswith(".json")]
    input_files = env["MICROBUILD_AOT_INPUTS"]
    arrays, saved = [], {}
    try:
        for m in summaries:
            specs = [TensorSpec(**{k: (tuple(v) if k == "shape" else v) for k, v in s.items()})
                     for s in m["inputs"]]
            path = input_files.get(m["prefix"])
            values = (load_inputs(path, specs) if path
                      else random_inputs(specs, env["MICROBUILD_AOT_SEED"]))
            arrays.append(values)
            for k, value in enumerate(values):
                saved[f"{m['prefix']}.input{k}"] = value
    except MicrobuildError as err:
        report_error(err)
        return 1
    Path(str(target[0])).write_text(aot.aot_models_c(summaries, arrays))
    np.savez(str(target[1]), **saved)
    return 0


def _link_with_fit_check(target, source, env):
    """Link; if a memory region overflows, link again keeping the output (--noinhibit-exec) and
    explain from that ELF what does not fit, instead of the linker's one-liner."""
    from microbuild.build.fit import analyze_elf, fit_error

    command = env.subst_list("$MB_LINKLINE", target=target, source=source)[0]
    command = [str(c) for c in command]
    result = subprocess.run(command, capture_output=True, text=True, env=env["ENV"])
    if result.returncode == 0:
        sys.stderr.write(result.stderr)
        return 0
    overflow = re.search(r"overflowed by|will not fit in region|section .* overlaps",
                         result.stderr)
    board_key = env.get("MICROBUILD_BOARD_KEY")
    if overflow and board_key in _boards and "-T" in " ".join(command):
        elf = str(target[0]) + ".overflow.elf"
        out_index = command.index("-o") + 1
        retry = command[:out_index] + [elf] + command[out_index + 1:] + ["-Wl,--noinhibit-exec"]
        Path(elf).unlink(missing_ok=True)  # never explain the overflow from an earlier attempt
        subprocess.run(retry, capture_output=True, text=True, env=env["ENV"])
        if Path(elf).is_file():
            report = analyze_elf(elf, _boards[board_key][0])
            if not report.fits:
                report_error(fit_error(report))
                return 1
    sys.stderr.write(result.stderr)
    return result.returncode


def _fit_report(target, source, env):
    from microbuild.build.fit import analyze_elf, fit_error

    board = _boards[env["MICROBUILD_BOARD_KEY"]][0]
    report = analyze_elf(str(source[0]), board)
    Path(str(target[0])).write_text(json.dumps(report.to_dict(), indent=1) + "\n")
    if not report.fits:
        report_error(fit_error(report))
        return 1
    return 0


def micro_firmware(env, target, board, models, executor: str = "aot", toolchain: str | None = None,
                   inputs: dict[str, str] | None = None, seed: int = 0):
    """Build one firmware. ``models``: .tflite paths (prefix from the file name) or a dict
    prefix -> path. ``inputs``: prefix -> .npy/.npz embedded as that model's input (default:
    seeded random, saved next to the firmware as <target>.input.npz)."""
    if executor != "aot":
        raise MicrobuildError(f"executor '{executor}' is not available yet; use 'aot'")
    benv = board_environment(env, board, toolchain)
    b = _board_of(benv)
    setup = benv["MICROBUILD_TOOLCHAIN"]
    base = env.File(str(target))
    out_dir = base.dir
    name = base.name
    src = out_dir.Dir(f"{name}.src")
    if not isinstance(models, dict):
        models = {model_prefix(m): m for m in models}

    runtime = micro_runtime(env, b, toolchain)
    objects, summaries = [], []
    fenv = benv.Clone()
    for prefix, path in models.items():
        generated = env.MicroModel(src.Dir(prefix).File(prefix), str(path))
        h, c, weights, summary = generated
        summaries.append(summary)
        fenv.AppendUnique(CPPPATH=[src.Dir(prefix)])
        for source in (c, weights):
            objects.append(fenv.Object(src.Dir(prefix).File(Path(str(source)).stem + ".o"),
                                       source)[0])
    inputs = {k: str(v) for k, v in (inputs or {}).items()}
    input_nodes = [env.File(p) for p in inputs.values()]
    table, saved_inputs = fenv.Command(
        [src.File("mb_aot_models.c"), out_dir.File(f"{name}.input.npz")],
        summaries + input_nodes + [fenv.Value(json.dumps({"seed": seed, "inputs": inputs}))],
        SCons.Action.Action(_aot_table, "$MICROAOTCOMSTR"),
        MICROBUILD_AOT_INPUTS=inputs, MICROBUILD_AOT_SEED=seed)
    objects.append(fenv.Object(src.File("mb_aot_models.o"), table)[0])
    objects.append(_object(benv, "aot/main.c"))

    elf_name = name if b.is_host else f"{name}.elf"
    linkflags = list(setup.linkflags)
    extra = [env.File(lib) for lib in setup.libs]
    ld = benv["MICROBUILD_CONFIG_FILES"].get(f"{b.name}.ld")
    link_map = out_dir.File(f"{name}.map")
    if ld is not None:
        linkflags += [f"-T{ld.abspath}", f"-Wl,-Map,{link_map.abspath}"]
    # Archives after the objects that use them: the linker pulls members in one pass.
    elf = fenv.Program(out_dir.File(elf_name), runtime[:-1] + objects + runtime[-1:] + extra,
                       LINKFLAGS=linkflags, LIBS=[], PROGSUFFIX="")
    if ld is not None:
        fenv.Depends(elf, ld)
        fenv.SideEffect(link_map, elf)  # written by the link, removed by `scons -c`
        fenv.Clean(elf, link_map)
    results = list(elf) + [saved_inputs]
    size = fenv.Command(out_dir.File(f"{name}.size.json"), elf,
                        SCons.Action.Action(_fit_report, "$MICROFITCOMSTR"))
    results += size
    if setup.objcopy and not b.is_host:
        results += fenv.Command(out_dir.File(f"{name}.bin"), elf,
                                SCons.Action.Action("$OBJCOPY -O binary $SOURCE $TARGET",
                                                    "$MICROOBJCOPYCOMSTR"))
        results += fenv.Command(out_dir.File(f"{name}.hex"), elf,
                                SCons.Action.Action("$OBJCOPY -O ihex $SOURCE $TARGET",
                                                    "$MICROOBJCOPYCOMSTR"))
    return results


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
    env["LINKCOM"] = SCons.Action.Action(_link_with_fit_check, "$LINKCOMSTR")
    if _quiet():
        env.SetDefault(CCCOMSTR="  CC      $TARGET", ASPPCOMSTR="  AS      $TARGET",
                       ASCOMSTR="  AS      $TARGET", ARCOMSTR="  AR      $TARGET",
                       RANLIBCOMSTR="  RANLIB  $TARGET", LINKCOMSTR="  LINK    $TARGET",
                       MICROMODELCOMSTR="  MODEL   $SOURCE -> ${TARGETS[1]}",
                       MICROGENCOMSTR="  GEN     $TARGET", MICROAOTCOMSTR="  GEN     $TARGET",
                       MICROFITCOMSTR="  FIT     $TARGET",
                       MICROOBJCOPYCOMSTR="  OBJCOPY $TARGET")
    else:
        env.SetDefault(LINKCOMSTR="$MB_LINKLINE")


def exists(env):
    return True
