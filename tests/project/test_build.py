"""Generated projects built with their own tools on this machine (`pio run` with an offline core
dir, `scons`, `make`), run (the host as a process, mps2-an500 in QEMU), and compared with TFLM bit
for bit. Every test builds its own project: builds take 1-3 s, and sharing them between tests
would tie tests to one pytest-xdist worker."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild.boards import load_board
from microbuild.firmware import aot
from microbuild.compiler import compile_model
from microbuild.paths import runtime_dir
from microbuild.project import build_project, generate_project
from microbuild.project.formats.platformio import PLATFORM_SOURCE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import (
    DS_CNN,
    HERE,
    MODELS,
    TINY_FC,
    check_app,
    check_outputs,
    reference,
    run_and_check,
    unprivileged,
)


def _firmware(board: str, folder: Path) -> Path:
    return folder / ("firmware" if load_board(board).is_host else "firmware.elf")


def _sh_blocks(markdown: str, after: str) -> list[str]:
    """The commands of the ```sh blocks in the section of ``markdown`` that starts at ``after``
    (comments and blank lines dropped)."""
    section = markdown.split(after, 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.DOTALL):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                commands.append(line)
    return commands


@pytest.mark.parametrize("fmt,board", [("platformio", "host"), ("scons", "host"),
                                       ("scons", "mps2-an500"), ("make", "host"),
                                       ("make", "mps2-an500")])
def test_project_builds_with_its_own_tool_and_prints_tflm_outputs(fmt, board, tmp_path, pio):
    """Your application (the generated src/main.c) prints TFLM's top class; built with
    MB_SELF_TEST=1, the self-test prints the outputs, equal to TFLM's bit for bit.
    (platformio, mps2-an500) is the README test below."""
    project = tmp_path / "project"
    result = generate_project(board, DS_CNN, fmt, project)
    assert sorted(result.user_created) == (["platformio_user.ini"] if fmt == "platformio"
                                           else []) + ["src/main.c"]

    def build(self_test: bool) -> tuple[Path, Path | None]:
        if fmt == "platformio":
            env = f"{board}-self-test" if self_test else board
            pio(project, "run", "-e", env)
            out = project / ".pio" / "build" / env
            return out, out / "microbuild" / "firmware.input.npz"
        flag = ["SELF_TEST=1"] if self_test else []
        if fmt == "scons":
            subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2", *flag], cwd=project,
                           check=True, capture_output=True, timeout=300)
            return project / "build", project / "build" / "firmware.input.npz"
        subprocess.run(["make", "-j2", *flag], cwd=project, check=True, capture_output=True,
                       timeout=300)
        return project / "build", None

    def run(out: Path, self_test: bool) -> subprocess.CompletedProcess:
        if load_board(board).is_host:
            return subprocess.run([str(_firmware(board, out))], capture_output=True, text=True,
                                  timeout=120)
        # The project's own run command (`scons run`, `make run`): QEMU's command line of
        # microbuild's qemu runner.
        assert result.run == [{"scons": "scons run", "make": "make run"}[fmt]]
        command = ([sys.executable, "-m", "SCons", "-Q", "run"] if fmt == "scons"
                   else ["make", "run"]) + (["SELF_TEST=1"] if self_test else [])
        proc = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=120)
        assert "qemu-system-arm -M mps2-an500" in proc.stdout
        return proc

    out, _ = build(self_test=False)
    app = run(out, self_test=False)
    check_app(app.stdout, app.returncode)
    out, saved = build(self_test=True)
    if saved is not None:  # the input the build embedded is the one the reference gets
        summary = compile_model(DS_CNN, prefix="ds_cnn").summary()
        with np.load(saved) as data:
            np.testing.assert_array_equal(data["ds_cnn.input0"],
                                          aot.embedded_inputs([summary])[0][0])
    if load_board(board).is_host:
        run_and_check(board, _firmware(board, out))
    else:
        assert (out / "firmware.bin").is_file() and (out / "firmware.hex").is_file()
        proc = run(out, self_test=True)
        check_outputs(proc.stdout, proc.returncode, board, "ds_cnn", DS_CNN)


def test_platformio_project_built_and_run_as_its_readme_says(tmp_path, pio):
    """A first-time user's path: the README's build and run commands, exactly, for an emulated
    board (the run goes through microbuild's PlatformIO platform's `exec` target, QEMU)."""
    project = tmp_path / "kws"
    result = generate_project("mps2-an500", DS_CNN, "platformio", project)
    readme = result.readme.read_text()
    install = _sh_blocks(readme, "## From nothing")
    assert any("pip install" in c and "platformio" in c for c in install)
    assert "sudo apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi "\
           "picolibc-arm-none-eabi qemu-system-arm" in install
    build = [c for c in install if c.startswith("pio ")]
    run = _sh_blocks(readme, "## Run")
    self_test = _sh_blocks(readme, "## Self-test against TFLM")
    assert build == ["pio run -e mps2-an500"] == result.build
    assert run == ["pio run -e mps2-an500 -t exec"] == result.run
    assert self_test == ["pio run -e mps2-an500-self-test -t exec"]
    for command in build:
        pio(project, *command.split()[1:])
    proc = pio(project, *run[0].split()[1:])
    check_app(proc.stdout, 0)
    proc = pio(project, *self_test[0].split()[1:])
    check_outputs(proc.stdout, 0, "mps2-an500", "ds_cnn", DS_CNN)
    size = project / ".pio" / "build" / "mps2-an500" / "firmware.size.json"
    assert '"fits": true' in size.read_text()
    # A second build is a no-op: nothing compiled, the model not compiled again, no relink.
    again = pio(project, "run", "-e", "mps2-an500").stdout
    assert "MODEL" not in again and "Compiling" not in again and "Linking" not in again


def test_replacing_the_tflite_and_running_pio_again_rebuilds_the_model(tmp_path, pio):
    project = tmp_path / "project"
    generate_project("host", DS_CNN, "platformio", project)
    first = pio(project, "run", "-e", "host-self-test").stdout
    assert "MODEL   model/ds_cnn.tflite" in first
    run_and_check("host", project / ".pio/build/host-self-test/firmware")
    # Another network under the same file name: compiled anew during `pio run`.
    shutil.copyfile(TINY_FC, project / "model" / "ds_cnn.tflite")
    second = pio(project, "run", "-e", "host-self-test").stdout
    assert "MODEL   model/ds_cnn.tflite" in second
    run_and_check("host", project / ".pio/build/host-self-test/firmware", model=TINY_FC)
    # The project works wherever it is copied (the platform is referenced through ${PROJECT_DIR}).
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(project, moved, ignore=shutil.ignore_patterns(".pio"))
    shutil.rmtree(project)
    pio(moved, "run", "-e", "host-self-test")
    run_and_check("host", moved / ".pio/build/host-self-test/firmware", model=TINY_FC)


def test_a_model_microbuild_cannot_compile_stops_pio_run_with_its_message(tmp_path, pio):
    project = tmp_path / "project"
    generate_project("host", DS_CNN, "platformio", project)
    shutil.copyfile(MODELS / "users" / "upsampling_tile_float.tflite",
                    project / "model" / "ds_cnn.tflite")
    proc = pio(project, "run", "-e", "host", check=False)
    assert proc.returncode != 0
    assert "microbuild: error: model/ds_cnn.tflite: cannot compile this model" in proc.stderr
    assert "TILE (ops 1, 7): TFLM has no kernel for it either" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def _check_vector_table(binary: Path, board: str) -> None:
    b = load_board(board)
    sp, reset = struct.unpack("<II", binary.read_bytes()[:8])
    stack, text = b.region_for("stack"), b.region_for("text")
    assert stack.origin < sp <= stack.end and sp % 8 == 0
    assert reset & 1 and text.origin <= reset < text.end


def test_stm32f746_platformio_project_builds_with_microbuild_platform(tmp_path, pio):
    project = tmp_path / "f746"
    result = generate_project("stm32f746", DS_CNN, "platformio", project)
    ini = (project / "platformio.ini").read_text()
    # PlatformIO's own platform and board, as users expect them; microbuild's platform as well.
    assert "[env:disco_f746ng]\nplatform = ststm32\nboard = disco_f746ng\n" in ini
    assert ("[env:stm32f746]\nplatform = symlink://${PROJECT_DIR}/platformio/microbuild-platform"
            in ini)
    assert "default_envs = disco_f746ng" in ini
    assert result.build == ["pio run -e stm32f746"]
    proc = pio(project, "run", "-e", "stm32f746")
    assert "Checking that it fits the board's memory" in proc.stdout
    out = project / ".pio" / "build" / "stm32f746"
    assert (out / "firmware.hex").read_text().startswith(":")
    _check_vector_table(out / "firmware.bin", "stm32f746")
    assert '"fits": true' in (out / "firmware.size.json").read_text()


def test_official_platform_environment_builds_with_a_stand_in_for_ststm32(tmp_path, pio):
    """The official environment (platform = ststm32) needs PlatformIO's registry. A stand-in
    platform named ststm32 (tests/project/stand_in_ststm32: the tools, flags and libraries of
    ststm32's bare-metal builder) takes its place through platformio_user.ini, to check what the
    extra script adds on an official platform: start-up code, drivers, flags, linker script."""
    project = tmp_path / "f746"
    generate_project("stm32f746", DS_CNN, "platformio", project)
    with (project / "platformio_user.ini").open("a") as ini:
        ini.write(f"\n[env:disco_f746ng]\nplatform = symlink://{HERE / 'stand_in_ststm32'}\n")
    proc = pio(project, "run", "-e", "disco_f746ng")
    assert "MODEL   model/ds_cnn.tflite" in proc.stdout
    out = project / ".pio" / "build" / "disco_f746ng"
    _check_vector_table(out / "program.bin", "stm32f746")


def test_link_runtime_uses_the_installation_in_place(tmp_path, pio):
    runtime = str(runtime_dir())
    project = tmp_path / "make"
    result = generate_project("host", DS_CNN, "make", project, link_runtime=True)
    assert not (project / "runtime").exists()
    assert f"-I{runtime}/include" in (project / "Makefile").read_text()
    assert all(not rel.startswith("runtime/") for rel in result.generated)
    build_project(project)
    app = subprocess.run([str(project / "build" / "firmware")], capture_output=True, text=True)
    check_app(app.stdout, app.returncode)
    subprocess.run(["make", "-j2", "SELF_TEST=1"], cwd=project, check=True, capture_output=True)
    run_and_check("host", project / "build" / "firmware")

    pio_project = tmp_path / "pio"
    generate_project("host", DS_CNN, "platformio", pio_project, link_runtime=True)
    ini = (pio_project / "platformio.ini").read_text()
    assert f"platform = symlink://{PLATFORM_SOURCE}\n" in ini
    assert f"custom_microbuild_runtime = {runtime}\n" in ini
    assert not (pio_project / "platformio").joinpath("microbuild-platform").exists()
    pio(pio_project, "run", "-e", "host-self-test")
    run_and_check("host", pio_project / ".pio/build/host-self-test/firmware")

    scons_project = tmp_path / "scons"
    generate_project("host", DS_CNN, "scons", scons_project, link_runtime=True)
    assert f'RUNTIME = "{runtime}"' in (scons_project / "SConstruct").read_text()
    zephyr_project = tmp_path / "zephyr"
    generate_project("stm32f746", DS_CNN, "zephyr", zephyr_project, link_runtime=True)
    assert f"set(MICROBUILD_RUNTIME {runtime})" in \
        (zephyr_project / "modules/microbuild/CMakeLists.txt").read_text()
    assert not (zephyr_project / "modules/microbuild/runtime").exists()


def test_generated_input_is_embedded(tmp_path):
    """--input: the array given is the one the firmware runs on (make, host)."""
    summary = compile_model(DS_CNN, prefix="ds_cnn").summary()
    (inputs,) = aot.embedded_inputs([summary], {}, seed=5)
    np.save(tmp_path / "x.npy", inputs[0])
    project = tmp_path / "p"
    result = generate_project("host", DS_CNN, "make", project, input=tmp_path / "x.npy")
    assert "model/ds_cnn.input.npy" in result.generated
    subprocess.run(["make", "-j2", "SELF_TEST=1"], cwd=project, check=True, capture_output=True)
    run_and_check("host", project / "build" / "firmware", seed=5)
    assert len(reference(DS_CNN, 5)) == 1


@pytest.mark.parametrize("fmt,board", [("platformio", "host"), ("scons", "mps2-an500"),
                                       ("make", "host"), ("make", "mps2-an500")])
def test_rpc_project_builds_and_is_driven_from_the_host(fmt, board, tmp_path, pio):
    from microbuild import api
    from microbuild.tensor_files import random_inputs

    project = tmp_path / "project"
    generate_project(board, DS_CNN, fmt, project, executor="rpc")
    description = None
    if fmt == "platformio":
        pio(project, "run", "-e", board)
        elf = _firmware(board, project / ".pio" / "build" / board)
        description = project / ".pio" / "build" / board / "microbuild" / "firmware.rpc.json"
    elif fmt == "scons":
        subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2"], cwd=project, check=True,
                       capture_output=True, timeout=300)
        elf = _firmware(board, project / "build")
    else:
        subprocess.run(["make", "-j2"], cwd=project, check=True, capture_output=True,
                       timeout=300)
        elf = _firmware(board, project / "build")
        description = project / "generated" / "firmware.rpc.json"
    with api.connect(board, elf, description=description) as dev:
        x = random_inputs(dev.specs("ds_cnn"), 11)
        y = dev.run("ds_cnn", x)
    from microbuild.tflm_reference import tflm_outputs

    np.testing.assert_array_equal(y[0], tflm_outputs(DS_CNN, x)[0])


@pytest.mark.parametrize("fmt,board", [("platformio", "host"), ("scons", "mps2-an500")])
def test_projects_build_the_kernels_a_tuning_log_picks(fmt, board, tmp_path, pio):
    """A log whose winner for DS-CNN's 1x1 convolutions is the reference (not the CPU's default)
    is copied into the project, and the project's own build compiles the model with it."""
    import json

    from microbuild.compiler.variants import Selection, Target
    from microbuild.tuning import TuningLog

    target = Target.of_board(load_board(board))
    default = compile_model(DS_CNN, prefix="ds_cnn", selection=Selection(target)).ops
    pointwise = {e["signature"] for e in default if e["opcode"] == "CONV_2D" and
                 "const:64x1x1x64" in e["signature"]}
    assert pointwise and all(e["kernel"] != "reference" for e in default
                             if e["signature"] in pointwise)
    log = TuningLog()
    for signature in pointwise:
        log.record(target.cpu, signature, {"best": "reference", "candidates": {}})
    log.save(tmp_path / "tune.json")

    project = tmp_path / "project"
    generate_project(board, DS_CNN, fmt, project, tuning=tmp_path / "tune.json")
    assert (project / "model" / "tune.json").is_file()
    if fmt == "platformio":
        pio(project, "run", "-e", f"{board}-self-test")
    else:
        subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2", "SELF_TEST=1"], cwd=project,
                       check=True, capture_output=True, timeout=300)
    (summary_path,) = [p for p in project.rglob("ds_cnn.json")]
    ops = json.loads(summary_path.read_text())["ops"]
    for e in ops:
        if e["signature"] in pointwise:
            assert (e["kernel"], e["kernel_choice"]) == ("reference", "tuned"), e
        elif e["opcode"] == "DEPTHWISE_CONV_2D":
            assert e["kernel_choice"] == "default" and e["kernel"] != "reference", e
    if load_board(board).is_host:
        run_and_check(board, _firmware(board, project / ".pio" / "build" / f"{board}-self-test"))
    else:
        proc = subprocess.run([sys.executable, "-m", "SCons", "-Q", "run", "SELF_TEST=1"],
                              cwd=project, capture_output=True, text=True, timeout=120)
        check_outputs(proc.stdout, proc.returncode, board, "ds_cnn", DS_CNN)


@pytest.mark.parametrize("fmt", ["make", "scons"])
def test_generated_project_builds_for_a_user_who_is_not_root(fmt):
    """Root hides paths outside the project (the Makefile once wrote its map to /firmware.map):
    build in a folder the unprivileged user owns, as that user, with HOME in that folder."""
    import os
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="mb-user-", dir="/tmp"))
    try:
        project = home / "project"
        generate_project("mps2-an500", DS_CNN, fmt, project)
        if os.geteuid() == 0:
            os.chmod(home, 0o755)
            subprocess.run(["chown", "-R", "nobody:nogroup", str(home)], check=True)
        command = (["make", "-j2"] if fmt == "make"
                   else [sys.executable, "-m", "SCons", "-Q", "-j2"])
        command, env = unprivileged(command)
        env["HOME"] = str(home)
        result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        built = sorted(p.name for p in (project / "build").iterdir())
        assert {"firmware.elf", "firmware.bin", "firmware.hex"} <= set(built), built
        if fmt == "make":
            assert (project / "build" / "firmware.map").is_file()
        assert not Path("/firmware.map").exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_scons_project_has_size_and_flash_targets(tmp_path):
    """`scons size` prints the fit report; `scons flash` runs the board's flash tool (st-flash
    for stm32f746), which fails here for want of a probe, with the tool's own message."""
    project = tmp_path / "project"
    result = generate_project("stm32f746", DS_CNN, "scons", project)
    assert result.run == ["scons flash"]
    scons = [sys.executable, "-m", "SCons", "-Q"]
    subprocess.run(scons + ["-j2"], cwd=project, check=True, capture_output=True, timeout=300)
    size = subprocess.run(scons + ["size"], cwd=project, capture_output=True, text=True,
                          timeout=120)
    assert size.returncode == 0, size.stderr
    header, *rows = size.stdout.strip().splitlines()
    assert header.split()[:4] == ["Region", "Used", "Size", "Use%"]
    assert {row.split()[0] for row in rows} >= {"flash"}, size.stdout
    flash = subprocess.run(scons + ["flash"], cwd=project, capture_output=True, text=True,
                           timeout=120)
    assert flash.returncode != 0
    assert "st-flash" in flash.stdout and "build/firmware.bin" in flash.stdout, flash.stdout


def test_platformio_core_command_and_generate_build_need_no_network(tmp_path, capsys):
    """`microbuild platformio-core DIR` seeds a core folder and prints the export line alone on
    stdout; a project built with it (and `generate --build`'s own, in .pio/, when the
    environment names no core) builds without PlatformIO's registry, which this machine cannot
    reach: a download attempt would fail the build."""
    import os

    from microbuild import cli
    from microbuild.project.platformio_offline import PROJECT_CORE

    assert cli.main(["platformio-core", str(tmp_path / "core")]) == 0
    printed = capsys.readouterr()
    assert printed.out == (f"export PLATFORMIO_CORE_DIR={tmp_path / 'core'} "
                           "PLATFORMIO_SETTING_ENABLE_TELEMETRY=No\n")
    assert (tmp_path / "core" / "packages" / "tool-scons.pio-link").is_file()
    # Seeding again changes nothing and still works.
    assert cli.main(["platformio-core", str(tmp_path / "core")]) == 0

    project = tmp_path / "project"
    generate_project("host", TINY_FC, "platformio", project)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLATFORMIO_")}
    build_project(project, env=env)
    assert (project / PROJECT_CORE / "packages" / "tool-scons.pio-link").is_file()
    app = subprocess.run([str(project / ".pio" / "build" / "host" / "firmware")],
                         capture_output=True, text=True, timeout=60)
    check_app(app.stdout, app.returncode, TINY_FC, "tiny_fc")
