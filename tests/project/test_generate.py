"""Generating projects (nothing is built here): reproducible output, self-contained trees, the
user's files kept on regeneration, and a clear error for every mistake."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import microbuild
from microbuild.errors import BoardError, MicrobuildError, ModelError, ToolchainError
from microbuild.paths import runtime_dir
from microbuild.project import FORMATS, ProjectError, generate_project
from microbuild.cli.generate import add_parser as add_generate_parser
from microbuild.cli.generate import cmd_generate as run_generate
from microbuild.project.executors import EXECUTORS, get_executor
from microbuild.project.files import MANIFEST
from microbuild.project.formats.platformio import PLATFORM_SOURCE
from microbuild.tensor_files import TensorFileError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import DS_CNN, REPO, TINY_FC, text_files

MODELS = REPO / "tests" / "models"


@pytest.fixture(scope="module")
def twice(tmp_path_factory):
    """Every format for stm32f746 (the board with PlatformIO and Zephyr names), generated twice
    into two folders."""
    root = tmp_path_factory.mktemp("twice")
    for fmt in FORMATS:
        for copy in ("a", "b"):
            generate_project("stm32f746", DS_CNN, fmt, root / copy / fmt)
    return root


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_same_inputs_give_byte_identical_projects(twice, fmt):
    a, b = text_files(twice / "a" / fmt), text_files(twice / "b" / fmt)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_projects_are_self_contained(twice, fmt):
    """No generated file names this checkout, the installation or the folder it was written to,
    and every runtime file the build needs is copied in. The one exception is by design: the
    Python that ran `generate`, which `regenerate` (and Zephyr's fit report) runs microbuild with
    (overridable)."""
    root = twice / "a" / fmt
    files = text_files(root)
    for rel, data in files.items():
        data = data.replace(sys.executable.encode(), b"<python>")
        for needle in (str(REPO), str(twice), str(Path(microbuild.__file__).parent)):
            assert needle.encode() not in data, (rel, needle)
    manifest = json.loads((root / MANIFEST).read_text())
    assert manifest["format"] == fmt and manifest["board"] == "stm32f746"
    assert set(manifest["generated"]) | {MANIFEST, *manifest["user"]} == set(files)
    assert files["model/ds_cnn.tflite"] == DS_CNN.read_bytes()
    assert "src/main.c" in manifest["user"]
    board = (root / "board" / "stm32f746.yaml").read_text()
    assert "\nextends:" not in board and "\nname: stm32f746\n" in board
    runtime = "modules/microbuild/runtime" if fmt == "zephyr" else "runtime"
    for rel in files:
        if rel.startswith(f"{runtime}/"):
            assert files[rel] == (runtime_dir() / rel[len(runtime) + 1:]).read_bytes()
    assert f"{runtime}/kernels/conv2d.c" in files
    # The copied runtime carries its licence (Apache-2.0) and notice.
    assert b"Apache License" in files[f"{runtime}/LICENSE"]
    assert b"Version 2.0" in files[f"{runtime}/LICENSE"]
    assert b"microbuild" in files[f"{runtime}/NOTICE"]
    if fmt != "zephyr":
        assert "runtime/startup/cortex_m.c" in files
        assert "runtime/drivers/console/stm32_usart.c" in files
        assert "runtime/drivers/console/cmsdk_uart.c" not in files  # another board's


def test_regenerating_keeps_the_users_files_and_replaces_generated_ones(tmp_path):
    project = tmp_path / "p"
    generate_project("host", DS_CNN, "platformio", project)
    again = generate_project("host", DS_CNN, "platformio", project)
    assert again.written == [] and again.removed == []  # nothing changed: nothing rewritten
    assert sorted(again.user_kept) == ["platformio_user.ini", "src/main.c"]

    main = project / "src" / "main.c"
    main.write_text(main.read_text() + "/* my change */\n")
    (project / "platformio_user.ini").write_text("[env]\nbuild_flags = -DMINE\n")
    (project / "src" / "extra.c").write_text("int extra;\n")
    (project / "README.md").write_text("my notes\n")  # a generated file, edited
    result = generate_project("host", TINY_FC, "platformio", project, seed=3)
    assert main.read_text().endswith("/* my change */\n")
    assert (project / "platformio_user.ini").read_text() == "[env]\nbuild_flags = -DMINE\n"
    assert (project / "src" / "extra.c").read_text() == "int extra;\n"
    assert result.replaced_edits == ["README.md"]
    assert "my notes" not in (project / "README.md").read_text()
    assert result.removed == ["model/ds_cnn.tflite"]
    assert not (project / "model" / "ds_cnn.tflite").exists()
    assert (project / "model" / "tiny_fc.tflite").read_bytes() == TINY_FC.read_bytes()
    ini = (project / "platformio.ini").read_text()
    assert "custom_microbuild_models = model/tiny_fc.tflite" in ini
    assert "custom_microbuild_seed = 3" in ini

    # Another format into the same folder: the first format's files go, the user's stay.
    switched = generate_project("host", TINY_FC, "make", project)
    assert "platformio.ini" in switched.removed and not (project / "platformio").exists()
    assert main.read_text().endswith("/* my change */\n")
    assert (project / "Makefile").is_file()


def test_a_stale_generated_file_the_user_edited_is_left_in_place(tmp_path):
    project = tmp_path / "p"
    generate_project("host", DS_CNN, "scons", project)
    (project / "SConstruct").write_text("# mine now\n")
    result = generate_project("host", DS_CNN, "make", project)
    assert result.left_edited == ["SConstruct"]
    assert (project / "SConstruct").read_text() == "# mine now\n"


def test_a_folder_with_anything_else_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ProjectError, match="holds no project generated by microbuild"):
        generate_project("host", DS_CNN, "make", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    with pytest.raises(ProjectError, match="is a file"):
        generate_project("host", DS_CNN, "make", tmp_path / "notes.txt")


def test_a_file_microbuild_did_not_write_is_never_overwritten(tmp_path):
    project = tmp_path / "p"
    generate_project("host", DS_CNN, "make", project)
    (project / "SConstruct").write_text("# my own build\n")
    with pytest.raises(ProjectError, match="SConstruct exists and was not written by microbuild"):
        generate_project("host", DS_CNN, "scons", project)
    assert (project / "SConstruct").read_text() == "# my own build\n"


def test_regenerating_from_inside_the_project(tmp_path, monkeypatch):
    """The command the README and `make regenerate` give: the project's own board YAML and model,
    relative paths, run in the project folder, gives the same project."""
    project = tmp_path / "p"
    first = generate_project("mps2-an500", DS_CNN, "make", project, seed=4)
    before = text_files(project)
    monkeypatch.chdir(project)
    command = json.loads((project / MANIFEST).read_text())
    assert command["seed"] == 4
    parser = argparse.ArgumentParser()
    add_generate_parser(parser.add_subparsers())
    regenerate = (project / "Makefile").read_text().split("regenerate:\n\t", 1)[1].split("\n")[0]
    argv = regenerate.split()[1:]
    assert argv[:3] == ["generate", "--board", "board/mps2-an500.yaml"]
    assert run_generate(parser.parse_args(argv)) == 0
    assert text_files(project) == before
    assert first.user_created == ["src/main.c"]


def test_cli_parser_and_output(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="microbuild")
    add_generate_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["generate", "--board", "mps2-an500", "--model", str(DS_CNN),
                              "--format", "scons", "-o", str(tmp_path / "kws")])
    assert args.func is run_generate
    assert run_generate(args) == 0
    out = capsys.readouterr().out
    assert f"scons project for board mps2-an500 in {tmp_path / 'kws'}" in out
    assert "created src/main.c (yours: never overwritten)" in out
    assert f"build: cd {tmp_path / 'kws'} && scons -j4" in out
    assert "run:   " in out and "scons run" in out
    with pytest.raises(SystemExit):  # argparse: an unknown format is a usage error
        parser.parse_args(["generate", "--board", "host", "--model", "m.tflite", "--format",
                           "cmake", "-o", "x"])


@pytest.mark.parametrize("call,error,message", [
    (dict(fmt="cmake"), ProjectError, "unknown project format 'cmake'; choose one of: "
                                      "platformio, zephyr, scons, make"),
    (dict(executor="tvm"), ProjectError, "unknown executor 'tvm'"),
    (dict(board="mps2-an500", fmt="zephyr"), BoardError,
     "board 'mps2-an500' has no Zephyr board name.*zephyr: \\{board: <name>\\}.*stm32f746"),
    (dict(board="no-such-board"), BoardError, "no board named 'no-such-board'"),
    (dict(model=MODELS / "missing.tflite"), ModelError, "no such model file"),
    (dict(model=[DS_CNN, DS_CNN]), ModelError, "two models are named ds_cnn.tflite"),
    (dict(toolchain="clang"), ToolchainError, "does not list toolchain 'clang'"),
    (dict(board="stm32f746", fmt="zephyr", toolchain="clang"), ProjectError,
     "--toolchain does not apply to a Zephyr application"),
    (dict(model=[DS_CNN, TINY_FC], input=DS_CNN), ProjectError, "--input goes with a single"),
])
def test_user_errors_are_microbuild_errors_with_clear_messages(tmp_path, call, error, message):
    kwargs = dict(board="host", model=DS_CNN, fmt="make", out_dir=tmp_path / "p")
    kwargs.update(call)
    with pytest.raises(error, match=message):
        generate_project(**kwargs)
    assert issubclass(error, MicrobuildError)
    assert not (tmp_path / "p").exists()  # nothing written


def test_an_input_that_does_not_fit_the_model_is_refused(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 3), np.int8))
    with pytest.raises(TensorFileError, match="shape is \\[1, 3\\]"):
        generate_project("host", DS_CNN, "make", tmp_path / "p", input=tmp_path / "x.npy")


def test_a_board_naming_half_a_platformio_target_is_refused(tmp_path):
    (tmp_path / "half.yaml").write_text(
        "name: half\nextends: mps2-an500\ntitle: half a PlatformIO target\n"
        "platformio:\n  board: some_board\n")
    with pytest.raises(BoardError, match="names a board but no platform"):
        generate_project(tmp_path / "half.yaml", DS_CNN, "platformio", tmp_path / "p")


def test_executors_are_one_table_entry_each():
    aot, rpc = get_executor("aot"), get_executor("rpc")
    assert list(EXECUTORS) == ["aot", "rpc"]
    assert aot.main == "aot/main.c" and aot.table_file == "mb_aot_models.c"
    assert rpc.main == "rpc/main.c" and rpc.table_file == "mb_rpc_models.c"
    assert "rpc/server.c" in rpc.runtime_sources and not rpc.embeds_inputs
    for executor in (aot, rpc):
        assert (runtime_dir() / executor.main).is_file()
    with pytest.raises(ProjectError, match="unknown executor 'tvm'"):
        get_executor("tvm")


def test_rpc_zephyr_projects_serve_on_zephyrs_uart(tmp_path):
    """Once refused; now src/main.c serves the RPC executor over Zephyr's polling UART API (it
    is built and driven in tests/project/test_zephyr.py)."""
    generate_project("stm32f746", DS_CNN, "zephyr", tmp_path / "z", executor="rpc")
    main = (tmp_path / "z" / "src" / "main.c").read_text()
    assert "uart_poll_in(console" in main and "mb_rpc_server_run()" in main
    assert (tmp_path / "z" / "modules/microbuild/generated/firmware.rpc.json").is_file()


def test_the_shipped_platformio_platform():
    manifest = json.loads((PLATFORM_SOURCE / "platform.json").read_text())
    assert manifest["name"] == "microbuild"
    assert manifest["version"] == microbuild.__version__
    assert manifest["packages"] == {}  # the toolchain on the machine: nothing to download
    assert "buildtime.pio_platform(env)" in (PLATFORM_SOURCE / "builder" / "main.py").read_text()


def test_platformio_environments_follow_the_board_yaml(tmp_path):
    expected = {"nrf52840dk": ("nordicnrf52", "nrf52840_dk"), "rp2040-pico": ("raspberrypi", "pico"),
                "nucleo-f746zg": ("ststm32", "nucleo_f746zg"), "atmega328p": ("atmelavr", "uno")}
    for board, (platform, pio_board) in expected.items():
        project = tmp_path / board
        generate_project(board, TINY_FC, "platformio", project)
        ini = (project / "platformio.ini").read_text()
        assert f"[env:{pio_board}]\nplatform = {platform}\nboard = {pio_board}\n" in ini
        assert f"[env:{board}]\nplatform = symlink://${{PROJECT_DIR}}/platformio/" \
               "microbuild-platform\n" in ini
        assert f"default_envs = {pio_board}\n" in ini
    generate_project("riscv32-virt", TINY_FC, "platformio", tmp_path / "rv")
    ini = (tmp_path / "rv" / "platformio.ini").read_text()
    # Only microbuild's platform, and its self-test environment (src/main.c with MB_SELF_TEST=1).
    assert ini.count("[env:") == 2 and "default_envs = riscv32-virt\n" in ini
    assert ("[env:riscv32-virt-self-test]\nextends = env:riscv32-virt\n"
            "build_flags = -DMB_SELF_TEST=1\n") in ini
    shutil.rmtree(tmp_path / "rv")


def test_regenerating_keeps_the_tuning_log_and_forced_variants(tmp_path, monkeypatch):
    """`make regenerate` once dropped --tuning and --variant (and deleted the copied log)."""
    from microbuild.compiler import compile_model
    from microbuild.boards import load_board
    from microbuild.compiler.variants import Selection, Target
    from microbuild.tuning import TuningLog

    target = Target.of_board(load_board("mps2-an500"))
    graph = compile_model(DS_CNN, prefix="ds_cnn", selection=Selection(target)).summary()
    log = TuningLog()
    for op in graph["ops"]:
        if op["opcode"] == "DEPTHWISE_CONV_2D":
            log.record(target.cpu, op["signature"], {"best": "reference", "candidates": {}})
    log.save(tmp_path / "tune.json")
    project = tmp_path / "p"
    generate_project("mps2-an500", DS_CNN, "make", project, tuning=tmp_path / "tune.json",
                     variants={"FULLY_CONNECTED": "reference"})
    before = text_files(project)
    regenerate = (project / "Makefile").read_text().split("regenerate:\n\t", 1)[1].split("\n")[0]
    argv = regenerate.split()[1:]
    assert "--tuning" in argv and argv[argv.index("--tuning") + 1] == "model/tune.json"
    assert "FULLY_CONNECTED=reference" in argv
    monkeypatch.chdir(project)
    parser = argparse.ArgumentParser()
    add_generate_parser(parser.add_subparsers())
    assert run_generate(parser.parse_args(argv)) == 0
    assert text_files(project) == before
    assert (project / "model" / "tune.json").is_file()
