"""The project manifest (microbuild.yaml): found by walking up, validated like a board file,
filling the options of build, run, tune and generate (the command line overrides it), written by
`microbuild init`; and the issue's done-when: a folder holding only microbuild.yaml, a model and
your C and C++ sources builds and runs with no options, from the folder and from a sub-folder,
on the host (as a user who is not root) and on mps2-an500 in QEMU."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from microbuild.cli import main
from microbuild.manifest import (ManifestError, apply_manifest, find_manifest, load_manifest,
                                 write_manifest)

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models"
TINY = MODELS / "tiny_fc.tflite"
sys.path.insert(0, str(REPO / "tests" / "project"))

from project_support import unprivileged  # noqa: E402

APP_C = r"""
#include "microbuild/platform.h"
#include "tiny_fc.h"

extern int constructor_ran;

static uint8_t workspace[TINY_FC_WORKSPACE_SIZE]
    __attribute__((aligned(TINY_FC_WORKSPACE_ALIGN), section(".bss.mb_workspace.app")));

int main(void)
{
    mb_console_init();
    int status = tiny_fc_run(tiny_fc_input0(workspace), tiny_fc_output0(workspace), workspace);
    mb_print(constructor_ran ? "constructor ran\n" : "constructor did NOT run\n");
    mb_print("model status ");
    mb_print_i32(status);
    mb_print("\n");
    return status;
}
"""

FLAG_CPP = r"""
extern "C" int constructor_ran;
int constructor_ran = 0;
struct Flag { Flag() { constructor_ran = 1; } };
static Flag flag;
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for var in ("MICROBUILD_BOARDS_PATH", "MICROBUILD_VERBOSE", "MICROBUILD_ERROR_LOG"):
        monkeypatch.delenv(var, raising=False)


def make_project(root: Path, manifest: str) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "sub" / "deeper").mkdir(parents=True)
    shutil.copy(TINY, root / "tiny_fc.tflite")
    (root / "src" / "app.c").write_text(APP_C)
    (root / "src" / "flag.cpp").write_text(FLAG_CPP)
    (root / "microbuild.yaml").write_text(textwrap.dedent(manifest))
    return root


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---- finding and validating --------------------------------------------------------------------

def test_found_from_the_folder_and_every_folder_below(tmp_path):
    make_project(tmp_path, "board: host\n")
    assert find_manifest(tmp_path) == tmp_path / "microbuild.yaml"
    assert find_manifest(tmp_path / "sub" / "deeper") == tmp_path / "microbuild.yaml"
    assert find_manifest(tmp_path.parent) != tmp_path / "microbuild.yaml"  # never downwards


def test_paths_are_relative_to_the_manifest(tmp_path):
    make_project(tmp_path, """\
        board: host
        models:
          - path: tiny_fc.tflite
            prefix: kws
            variants: {FULLY_CONNECTED: reference}
        sources: [src/, "src/*.c"]
        build_dir: out
        """)
    m = load_manifest(tmp_path / "microbuild.yaml")
    assert m.models[0].path == tmp_path / "tiny_fc.tflite" and m.models[0].prefix == "kws"
    assert m.models[0].variants == {"FULLY_CONNECTED": "reference"}
    # A folder brings its sources and goes on the include path; a file named twice counts once.
    assert m.sources == [tmp_path / "src" / "app.c", tmp_path / "src" / "flag.cpp"]
    assert m.include_dirs == [tmp_path / "src"]
    assert m.out_dir("host", "app") == tmp_path / "out" / "host-app"


def test_mistakes_are_reported_with_file_line_and_did_you_mean(tmp_path):
    make_project(tmp_path, """\
        board: host
        modles: [tiny_fc.tflite]
        executor: ap
        """)
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / "microbuild.yaml")
    message = str(info.value)
    where = tmp_path / "microbuild.yaml"
    assert f"{where}:2: modles: unknown key (did you mean models" in message
    assert f"{where}:3: executor: 'ap' is not one of: app, aot, rpc (did you mean app?)" in message


def test_names_and_files_that_are_not_there(tmp_path):
    make_project(tmp_path, """\
        board: mps2-an50
        models:
          - tiny_fc.tflite
          - path: nothere.tflite
            variants: {CONV2D: dsp}
          - tiny_fc.tflite
        sources: ["src/*.rs"]
        boards: [myboards]
        """)
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / "microbuild.yaml")
    lines = str(info.value).splitlines()[1:]
    where = tmp_path / "microbuild.yaml"
    expected = [
        f"{where}:1: board: no board named 'mps2-an50' (did you mean mps2-an500",
        f"{where}:4: models[1].path: no such file: {tmp_path / 'nothere.tflite'}",
        f"{where}:5: models[1].variants.CONV2D: unknown operator (did you mean CONV_2D",
        f"{where}:6: models[2]: C prefix 'tiny_fc' is also model 0's",
        f"{where}:7: sources[0]: 'src/*.rs' matches no C, C++ or assembly file",
        f"{where}:8: boards[0]: no such folder: {tmp_path / 'myboards'}",
    ]
    for start in expected:
        assert any(line.strip().startswith(start) for line in lines), (start, lines)


def test_app_executor_needs_sources(tmp_path):
    make_project(tmp_path, "board: host\nexecutor: app\n")
    with pytest.raises(ManifestError, match=r"microbuild.yaml:2: executor: executor app runs "
                                            r"your own main\(\): list its files in `sources:`"):
        load_manifest(tmp_path / "microbuild.yaml")


def test_a_manifest_error_is_one_message_from_the_cli(tmp_path, monkeypatch, capsys):
    make_project(tmp_path, "board: host\nbuild_dri: out\n")
    monkeypatch.chdir(tmp_path / "sub")
    code, out, err = cli(capsys, "build")
    assert code == 1 and "Traceback" not in err
    assert err.startswith("error: project manifest") and "did you mean build_dir?" in err


def test_without_a_manifest_the_options_are_required(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "build", "--board", "host")
    assert code == 1
    assert "give --model: no microbuild.yaml in" in err and "microbuild init" in err


# ---- filling the commands' options ---------------------------------------------------------------

def test_command_line_overrides_the_manifest(tmp_path, monkeypatch):
    make_project(tmp_path, """\
        board: host
        models: [tiny_fc.tflite]
        sources: [src]
        """)
    monkeypatch.chdir(tmp_path / "sub")
    args = argparse.Namespace(board="mps2-an500", model=None, executor="aot", toolchain=None,
                              out_dir=None, tuning=None)
    manifest = apply_manifest(args)
    assert args.board == "mps2-an500" and args.executor == "aot"  # given: kept
    assert args.model == [str(tmp_path / "tiny_fc.tflite")]  # not given: the manifest's
    assert args.out_dir == str(tmp_path / "build" / "mps2-an500")
    assert manifest.sources and args.manifest is manifest
    args = argparse.Namespace(board=None, model=None, executor=None, toolchain=None,
                              out_dir=None)
    apply_manifest(args, executor_default="rpc")
    assert args.executor == "app" and args.out_dir == str(tmp_path / "build" / "host-app")


def test_the_manifests_board_folders_are_searched(tmp_path, monkeypatch, capsys):
    """A board of your own in a folder the manifest names, used from a sub-folder (where
    ./boards is not)."""
    make_project(tmp_path, """\
        board: my-board
        models: [tiny_fc.tflite]
        boards: [hw/boards]
        """)
    (tmp_path / "hw" / "boards").mkdir(parents=True)
    (tmp_path / "hw" / "boards" / "my-board.yaml").write_text(
        "name: my-board\nextends: host\ntitle: my host\n")
    monkeypatch.chdir(tmp_path / "sub" / "deeper")
    code, out, err = cli(capsys, "build", "--run")
    assert code == 0, err
    assert "mb-aot" not in out and "model tiny_fc" in out  # the harness's outputs table
    assert (tmp_path / "build" / "my-board" / "firmware").is_file()


def test_generate_with_no_options(tmp_path, monkeypatch, capsys):
    make_project(tmp_path, "board: host\nmodels: [tiny_fc.tflite]\n")
    monkeypatch.chdir(tmp_path / "sub")
    code, out, err = cli(capsys, "generate")
    assert code == 0, err
    assert (tmp_path / "make-project" / "Makefile").is_file()
    assert "make project for board host" in out


# ---- microbuild init ---------------------------------------------------------------------------

def test_init_writes_a_template_that_loads(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "init")
    assert code == 0 and "commented template" in out
    text = (tmp_path / "microbuild.yaml").read_text()
    assert "# board:" in text and "# sources:" in text
    m = load_manifest(tmp_path / "microbuild.yaml")
    assert m.board is None and m.models == [] and m.sources == []


def test_init_with_options_refuses_to_overwrite_without_force(tmp_path, monkeypatch, capsys):
    make_project(tmp_path, "board: host\n")
    (tmp_path / "microbuild.yaml").unlink()
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "init", "--board", "host", "--model", "tiny_fc.tflite", "--source",
               "src")[0] == 0
    m = load_manifest(tmp_path / "microbuild.yaml")
    assert (m.board, m.models[0].path, m.include_dirs) == ("host", tmp_path / "tiny_fc.tflite",
                                                           [tmp_path / "src"])
    code, out, err = cli(capsys, "init", "--board", "mps2-an500")
    assert code == 1 and "exists; edit it, or pass --force" in err
    assert load_manifest(tmp_path / "microbuild.yaml").board == "host"
    assert cli(capsys, "init", "--board", "mps2-an500", "--force")[0] == 0
    assert load_manifest(tmp_path / "microbuild.yaml").board == "mps2-an500"


def test_init_with_a_wrong_board_leaves_nothing_behind(tmp_path):
    with pytest.raises(ManifestError, match="no board named 'hots'.*did you mean host"):
        write_manifest(tmp_path, board="hots")
    assert not (tmp_path / "microbuild.yaml").exists()


# ---- the done-when -----------------------------------------------------------------------

MANIFEST = """\
    board: {board}
    models: [tiny_fc.tflite]
    sources: [src/]
    """


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="no qemu-system-arm")
def test_build_and_run_with_no_options_on_mps2_an500(tmp_path, monkeypatch, capsys):
    make_project(tmp_path, MANIFEST.format(board="mps2-an500"))
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "build")
    assert code == 0, err
    assert (tmp_path / "build" / "mps2-an500-app" / "firmware.elf").is_file()
    monkeypatch.chdir(tmp_path / "sub" / "deeper")
    code, out, err = cli(capsys, "run")
    assert code == 0, err
    assert out == "constructor ran\nmodel status 0\n"


def test_build_and_run_with_no_options_on_the_host_as_a_user_who_is_not_root():
    """In a folder the unprivileged user owns, as that user: `microbuild build` in the project,
    then `microbuild run` from a sub-folder, then both again with the aot harness (the command
    line overriding the manifest's executor)."""
    home = Path(tempfile.mkdtemp(prefix="mb-manifest-", dir="/tmp"))
    try:
        project = make_project(home / "project", MANIFEST.format(board="host"))
        if os.geteuid() == 0:
            os.chmod(home, 0o755)
            subprocess.run(["chown", "-R", "nobody:nogroup", str(home)], check=True)

        def microbuild(folder: Path, *args: str) -> subprocess.CompletedProcess:
            command, env = unprivileged([sys.executable, "-m", "microbuild", *args])
            env["HOME"] = str(home)
            return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=600)

        built = microbuild(project, "build")
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        assert f"firmware: {project / 'build' / 'host-app' / 'firmware'}" in built.stdout
        ran = microbuild(project / "sub" / "deeper", "run")
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert ran.stdout == "constructor ran\nmodel status 0\n"
        harness = microbuild(project / "sub", "run", "--executor", "aot")
        assert harness.returncode == 0, harness.stderr[-3000:]
        assert "model tiny_fc" in harness.stdout
        owners = {p.stat().st_uid for p in (project / "build").rglob("*")}
        assert owners == {os.geteuid() if os.geteuid() != 0 else
                          int(subprocess.run(["id", "-u", "nobody"], capture_output=True,
                                             text=True).stdout)}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_tune_writes_the_manifests_log_and_build_uses_it(tmp_path, monkeypatch, capsys):
    """`microbuild tune` with no options, from a sub-folder: the manifest's board and model, the
    log the model's `tuning:` names; `microbuild build` then compiles the model with it."""
    import json

    make_project(tmp_path, """\
        board: host
        models:
          - path: ds_cnn.tflite
            tuning: logs/tune.json
        """)
    shutil.copy(MODELS / "ds_cnn.tflite", tmp_path / "ds_cnn.tflite")
    (tmp_path / "logs").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    code, out, err = cli(capsys, "tune", "--trials", "2", "--repeat", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["signatures"]
    assert (tmp_path / "logs" / "tune.json").is_file()
    assert (tmp_path / "build" / "host-tune").is_dir()  # tune's firmware under build_dir
    code, out, err = cli(capsys, "build")
    assert code == 0, err
    summary = json.loads((tmp_path / "build" / "host" / "firmware.src" / "ds_cnn" /
                          "ds_cnn.json").read_text())
    assert any(op["kernel_choice"] == "tuned" for op in summary["ops"])
