"""microbuild as a user installs it: the wheel (distribution microbuild-mcu), installed
non-editable into a fresh venv outside the checkout, runs the README's main job and builds a
generated Make project from an empty folder. The runtime, the board definitions and the project
templates must come from inside the installed package, not from this checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DS_CNN = REPO / "tests" / "models" / "ds_cnn.tflite"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, wheel): the wheel built from this checkout, installed into a new venv.

    The wheel is installed with --no-deps and the venv sees this environment's packages (numpy,
    scons, ...) through a .pth path line, so the test needs no network: a path line adds the
    folder but runs none of its .pth files, so the checkout's editable install stays out."""
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist), str(REPO)], check=True, capture_output=True,
                   timeout=600)
    wheel = next(dist.glob("*.whl"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], check=True, capture_output=True, text=True).stdout
    (Path(site.strip()) / "test_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")
    return venv, wheel


def test_the_wheel_is_named_and_carries_the_data_folders(installed):
    _, wheel = installed
    assert wheel.name.startswith("microbuild_mcu-")
    names = set(zipfile.ZipFile(wheel).namelist())
    for member in ("microbuild/runtime/include/microbuild/kernels/conv2d.h",
                   "microbuild/runtime/kernels/conv2d.c", "microbuild/runtime/LICENSE",
                   "microbuild/board_defs/mps2-an500.yaml",
                   "microbuild/project_templates/make/Makefile",
                   "microbuild/schema/board.schema.json"):
        assert member in names, member
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_installed_package_uses_its_own_data_folders(installed, tmp_path):
    venv, _ = installed
    probe = ("import microbuild, microbuild.paths as p, microbuild.boards.loader as l; "
             "print(microbuild.__file__); print(p.runtime_dir()); print(l.builtin_boards_dir()); "
             "print(p.project_templates_dir())")
    lines = subprocess.run([str(venv / "bin" / "python"), "-c", probe], cwd=tmp_path,
                           check=True, capture_output=True, text=True).stdout.split()
    assert all(line.startswith(str(venv)) for line in lines), lines


def test_readme_main_job_and_a_make_project_from_an_empty_folder(installed, tmp_path):
    venv, _ = installed
    microbuild = str(venv / "bin" / "microbuild")
    shutil.copy(DS_CNN, tmp_path / "ds_cnn.tflite")
    run = subprocess.run([microbuild, "build", "--board", "mps2-an500", "--model",
                          "ds_cnn.tflite", "--run"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "ds_cnn: " in run.stdout and "instructions (QEMU icount" in run.stdout
    gen = subprocess.run([microbuild, "generate", "--board", "host", "--model", "ds_cnn.tflite",
                          "--format", "make", "-o", "project"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert gen.returncode == 0, gen.stdout[-3000:] + gen.stderr[-3000:]
    assert str(REPO) not in (tmp_path / "project" / "Makefile").read_text()
    make = subprocess.run(["make", "-j2"], cwd=tmp_path / "project", capture_output=True,
                          text=True, timeout=600)
    assert make.returncode == 0, make.stdout[-3000:] + make.stderr[-3000:]
    result = subprocess.run([str(tmp_path / "project" / "build" / "firmware")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "ds_cnn: top class " in result.stdout, result.stdout
    # The self-test, from the same project.
    make = subprocess.run(["make", "-j2", "SELF_TEST=1"], cwd=tmp_path / "project",
                          capture_output=True, text=True, timeout=600)
    assert make.returncode == 0, make.stdout[-3000:] + make.stderr[-3000:]
    result = subprocess.run([str(tmp_path / "project" / "build" / "firmware")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "mb-aot end" in result.stdout, result.stdout[-2000:]
