"""microbuild's SCons tool as a project uses it: a real SConstruct in a temporary folder, built with
SCons in a subprocess, and edited (model, board YAML) to check that a rebuild does exactly the work
the edit calls for. What was rebuilt is read from the tool's step lines ("  CC      build/...")."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models"
sys.path.insert(0, str(REPO / "tests" / "compiler"))

from compiler_support import run_tflm  # noqa: E402

needs_arm = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="arm-none-eabi-gcc is not installed")

SCONSTRUCT = """\
import microbuild

env = Environment(tools=["default", "microbuild"], toolpath=[microbuild.SCONS_TOOLPATH])
env.MicroFirmware("out/fw", board={board!r}, models=["model.tflite"])
"""

# "  CC      build/host/obj/kernels/add.o" -> ("CC", "build/host/obj/kernels/add.o")
STEP = re.compile(r"^  ([A-Z]+) +(\S.*)$")
UP_TO_DATE = "scons: `.' is up to date."


def scons(cwd: Path, *args: str, verbose: bool = False, check: bool = True
          ) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MICROBUILD_VERBOSE", "MICROBUILD_BOARDS_PATH",
                        "MICROBUILD_ERROR_LOG")}
    if verbose:
        env["MICROBUILD_VERBOSE"] = "1"
    proc = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"scons {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def steps(output: str) -> set[tuple[str, str]]:
    """The build steps SCons printed, as (kind, target). MODEL lines name the .c file."""
    found = set()
    for line in output.splitlines():
        m = STEP.match(line)
        if m:
            kind, target = m.groups()
            if kind == "MODEL":
                target = target.split(" -> ")[1]
            found.add((kind, target))
    return found


def compiled(output: str) -> set[str]:
    return {t for kind, t in steps(output) if kind in ("CC", "AS")}


def objects_under(root: Path, folder: str) -> set[str]:
    return {p.relative_to(root).as_posix() for p in (root / folder).rglob("*.o")}


def run_host_firmware(path: Path) -> list[list[str]]:
    """The `mb-aot` lines a host firmware prints, split into words."""
    proc = subprocess.run([str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line.split() for line in proc.stdout.splitlines() if line.startswith("mb-aot ")]


# ---- a host project: no-op rebuilds and model edits -----------------------------------------------

@pytest.fixture
def host_project(tmp_path):
    shutil.copyfile(MODELS / "tiny_fc.tflite", tmp_path / "model.tflite")
    (tmp_path / "SConstruct").write_text(SCONSTRUCT.format(board="host"))
    first = scons(tmp_path)
    assert ("LINK", "out/fw") in steps(first.stdout)
    return tmp_path


def test_first_build_prints_one_step_per_target(host_project):
    # A clean build of the host firmware compiled every kernel, linked, and wrote the fit report.
    kernels = objects_under(host_project, "build/host/obj/kernels")
    assert "build/host/obj/kernels/fully_connected.o" in kernels
    assert len(kernels) >= 10
    assert (host_project / "out" / "fw").is_file()
    assert (host_project / "out" / "fw.size.json").is_file()
    assert (host_project / "out" / "fw.input.npz").is_file()
    # Rebuilding from scratch prints exactly those objects (the step lines are what tests rely on).
    shutil.rmtree(host_project / "build")
    again = scons(host_project)
    assert kernels <= compiled(again.stdout)
    assert ("AR", "build/host/libmicrobuild.a") in steps(again.stdout)
    assert ("GEN", "build/host/config/mb_board_config.h") in steps(again.stdout)


def test_noop_rebuild_does_no_work(host_project):
    question = scons(host_project, "-q", check=False)
    assert question.returncode == 0, question.stdout + question.stderr
    dry = scons(host_project, "-n")
    assert dry.stdout.strip() == UP_TO_DATE
    assert steps(dry.stdout) == set()
    real = scons(host_project)
    assert real.stdout.strip() == UP_TO_DATE
    # The command strings are not part of any signature: verbose mode has nothing to do either.
    verbose = scons(host_project, verbose=True)
    assert verbose.stdout.strip() == UP_TO_DATE


def test_editing_the_model_rebuilds_the_model_and_link_only(host_project):
    before = {p: p.stat().st_mtime_ns for p in (host_project / "build").rglob("*.o")}
    assert before
    shutil.copyfile(MODELS / "ds_cnn.tflite", host_project / "model.tflite")

    question = scons(host_project, "-q", check=False)
    assert question.returncode == 1  # out of date

    rebuilt = scons(host_project)
    assert steps(rebuilt.stdout) == {
        ("MODEL", "out/fw.src/model/model.c"),
        ("CC", "out/fw.src/model/model.o"),
        ("CC", "out/fw.src/model/model_weights.o"),
        ("GEN", "out/fw.src/mb_aot_models.c"),
        ("CC", "out/fw.src/mb_aot_models.o"),
        ("LINK", "out/fw"),
        ("FIT", "out/fw.size.json"),
    }
    # Not one runtime object (kernels, drivers, main) was touched, nor the library.
    after = {p: p.stat().st_mtime_ns for p in (host_project / "build").rglob("*.o")}
    assert after == before

    # The relinked firmware really runs the new model: ds_cnn's 12 outputs, equal to TFLM's on the
    # input embedded in it.
    with np.load(host_project / "out" / "fw.input.npz") as saved:
        x = saved["model.input0"]
    assert x.shape == (1, 49, 10, 1) and x.dtype == np.int8
    (want,) = run_tflm(MODELS / "ds_cnn.tflite", [x])
    lines = run_host_firmware(host_project / "out" / "fw")
    (out,) = [ln for ln in lines if ln[1] == "output"]
    assert out[2:5] == ["model", "0", "12"]
    got = np.frombuffer(bytes.fromhex(out[5]), dtype=np.int8)
    np.testing.assert_array_equal(got, want.reshape(-1))

    assert scons(host_project, "-q", check=False).returncode == 0


def test_verbose_mode_prints_full_commands(host_project):
    shutil.copyfile(MODELS / "ds_cnn.tflite", host_project / "model.tflite")
    proc = scons(host_project, verbose=True)
    assert steps(proc.stdout) == set()  # no "  CC  path" lines...
    lines = proc.stdout.splitlines()
    # ... but the compiler's command lines, with the board's include folder and flags.
    cc = [ln for ln in lines if " -c " in ln and ln.endswith("out/fw.src/model/model_weights.c")]
    assert len(cc) == 1
    assert "-o out/fw.src/model/model_weights.o" in cc[0]
    assert "-Ibuild/host/config" in cc[0] and "-ffunction-sections" in cc[0]
    link = [ln for ln in lines if " -o out/fw " in ln]
    assert len(link) == 1 and "build/host/libmicrobuild.a" in link[0]
    assert "-Wl,--gc-sections" in link[0]


# ---- a user board in ./boards: what each YAML edit rebuilds ----------------------------------------

BOARD = {
    "init": "*(volatile uint32_t *)0x40010000u = 1u;",
    "stack_size": "16K",
    "baud": 115200,
    "cflags": "[-O2]",
}


def write_board(root: Path, **changes) -> None:
    values = {**BOARD, **changes}
    (root / "boards" / "my.yaml").write_text(textwrap.dedent(f"""\
        name: my
        extends: mps2-an385
        memory:
          stack_size: {values['stack_size']}
        toolchain:
          cflags: {values['cflags']}
        transport:
          baud: {values['baud']}
        init: |
          {values['init']}
        """))


@pytest.fixture
def board_project(tmp_path):
    (tmp_path / "boards").mkdir()
    write_board(tmp_path)
    shutil.copyfile(MODELS / "tiny_fc.tflite", tmp_path / "model.tflite")
    # board="my" is found in ./boards, which is on the search path when SCons runs here.
    (tmp_path / "SConstruct").write_text(SCONSTRUCT.format(board="my"))
    first = scons(tmp_path)
    assert ("GEN", "build/my/config/my.ld") in steps(first.stdout)
    assert ("LINK", "out/fw.elf") in steps(first.stdout)
    assert scons(tmp_path, "-q", check=False).returncode == 0
    return tmp_path


AFTER_LINK = {("LINK", "out/fw.elf"), ("OBJCOPY", "out/fw.bin"), ("OBJCOPY", "out/fw.hex"),
              ("FIT", "out/fw.size.json")}


@needs_arm
def test_board_init_snippet_rebuilds_init_library_and_link(board_project):
    write_board(board_project, init="*(volatile uint32_t *)0x40010000u = 2u;")
    proc = scons(board_project)
    assert steps(proc.stdout) == {
        ("GEN", "build/my/config/mb_board_init.c"),
        ("CC", "build/my/obj/mb_board_init.o"),
        ("AR", "build/my/libmicrobuild.a"),
        ("RANLIB", "build/my/libmicrobuild.a"),
    } | AFTER_LINK
    assert "= 2u;" in (board_project / "build/my/config/mb_board_init.c").read_text()


@needs_arm
def test_board_stack_size_regenerates_linker_script_and_relinks_only(board_project):
    write_board(board_project, stack_size="8K")
    proc = scons(board_project)
    assert steps(proc.stdout) == {("GEN", "build/my/config/my.ld")} | AFTER_LINK
    assert compiled(proc.stdout) == set()
    size = json.loads((board_project / "out" / "fw.size.json").read_text())
    assert size["stack_bytes"] == 8 * 1024


@needs_arm
def test_board_cflags_recompile_everything_for_the_board(board_project):
    every_object = (objects_under(board_project, "build/my/obj")
                    | objects_under(board_project, "out/fw.src"))
    assert "build/my/obj/startup/cortex_m.o" in every_object
    write_board(board_project, cflags="[-Os]")
    proc = scons(board_project)
    assert compiled(proc.stdout) == every_object
    assert ("AR", "build/my/libmicrobuild.a") in steps(proc.stdout)
    assert AFTER_LINK <= steps(proc.stdout)
    # Nothing generated changed: the compiler flags are not in any generated file.
    assert not {s for s in steps(proc.stdout) if s[0] in ("GEN", "MODEL")}


@needs_arm
def test_board_baud_rebuilds_what_includes_the_board_config_only(board_project):
    write_board(board_project, baud=9600)
    proc = scons(board_project)
    header = (board_project / "build/my/config/mb_board_config.h").read_text()
    baud = re.search(r"#define MB_CONSOLE_BAUD (\w+)u\n", header)
    assert baud and int(baud.group(1), 0) == 9600
    built = compiled(proc.stdout)
    assert ("GEN", "build/my/config/mb_board_config.h") in steps(proc.stdout)
    # The C scanner found the generated header in the console driver...
    assert "build/my/obj/drivers/console/cmsdk_uart.o" in built
    # ... and not in any kernel or in the model's code.
    assert not {o for o in built if "/kernels/" in o}
    assert not {o for o in built if o.startswith("out/")}
    assert ("GEN", "build/my/config/my.ld") not in steps(proc.stdout)
    assert AFTER_LINK <= steps(proc.stdout)


# ---- SConstruct.example, run from another folder ---------------------------------------------------

@needs_arm
@pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                    reason="riscv64-unknown-elf-gcc is not installed")
def test_sconstruct_example_from_another_folder(tmp_path):
    # With -f, SCons' top folder ('#') is the current folder, so everything lands in tmp_path.
    example = REPO / "SConstruct.example"
    model = MODELS / "tiny_fc.tflite"
    proc = scons(tmp_path, "-f", str(example), f"model={model}")
    for board in ("mps2-an500", "riscv32-virt"):
        out = tmp_path / "build" / "example" / board
        for suffix in (".elf", ".bin", ".hex", ".map", ".size.json", ".input.npz"):
            assert (out / f"kws{suffix}").is_file(), f"{board}: no kws{suffix}"
        assert (tmp_path / "build/example/runtime" / board / "libmicrobuild.a").is_file()
        size = json.loads((out / "kws.size.json").read_text())
        assert size["board"] == board and size["fits"] is True
        # tiny_fc's weights, not the default ds_cnn's, plus SOFTMAX fast's exp() table (256
        # int32) on both; the M7's FC kernel adds a compile-time requantization table (3 int32
        # per output row)
        weights = {"mps2-an500": 352 + 1024, "riscv32-virt": 304 + 1024}
        assert size["weights_bytes"] == weights[board]
        summary = json.loads((out / "kws.src" / "kws" / "kws.json").read_text())
        assert summary["prefix"] == "kws" and Path(summary["model"]) == model
        assert ("LINK", f"build/example/{board}/kws.elf") in steps(proc.stdout)
    assert scons(tmp_path, "-f", str(example), f"model={model}", "-q",
                 check=False).returncode == 0
