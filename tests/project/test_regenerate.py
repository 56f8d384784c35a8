"""`regenerate` in generated Make, SCons and PlatformIO projects finds microbuild the way the
project was generated: the absolute path of the Python that ran `generate` (`<python> -m
microbuild`), so it works with a PATH that has no `microbuild` on it (setup.sh's .venv not
activated); MICROBUILD (a Make variable, an SCons argument, the environment) overrides it."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from microbuild.project import generate_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import TINY_FC

# A PATH with the system's tools (make, the compilers) and no microbuild: not this venv's bin/.
BARE_PATH = "/usr/bin:/bin"


def bare_environment(base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in (base or os.environ).items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "MICROBUILD")}
    env.update(PATH=BARE_PATH, **extra)
    assert shutil.which("microbuild", path=BARE_PATH) is None, "a microbuild is on the bare PATH"
    return env


def regenerate_command(fmt: str) -> list[str]:
    return {"make": ["make", "regenerate"],
            "scons": [sys.executable, "-m", "SCons", "-Q", "regenerate"],
            "platformio": [sys.executable, "-m", "platformio", "run", "-t", "regenerate"]}[fmt]


def base_environment(fmt: str, pio) -> dict[str, str] | None:
    return pio.env if fmt == "platformio" else None


@pytest.mark.parametrize("fmt", ["make", "scons", "platformio"])
def test_regenerate_works_without_microbuild_on_path(fmt, tmp_path, pio):
    project = tmp_path / "project"
    generate_project("host", [str(TINY_FC)], fmt, project, seed=3)
    readme = (project / "README.md").read_text()
    (project / "README.md").unlink()  # a generated file: regenerating writes it back
    proc = subprocess.run(regenerate_command(fmt), cwd=project, capture_output=True, text=True,
                          env=bare_environment(base_environment(fmt, pio)), timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert (project / "README.md").read_text() == readme
    # It ran `generate` with the project's own options (--seed 3 among them).
    assert f"project for board host in {project}" in proc.stdout
    assert f"{shlex.quote(sys.executable)} -m microbuild generate" in readme
    assert "--seed 3" in readme


@pytest.mark.parametrize("fmt", ["make", "scons", "platformio"])
def test_microbuild_variable_overrides_how_regenerate_runs_it(fmt, tmp_path, pio):
    project = tmp_path / "project"
    generate_project("host", [str(TINY_FC)], fmt, project)
    (project / "README.md").unlink()
    env = bare_environment(base_environment(fmt, pio), MICROBUILD="echo other-microbuild")
    proc = subprocess.run(regenerate_command(fmt), cwd=project, capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert f"other-microbuild generate --board board/host.yaml --model model/tiny_fc.tflite " \
           f"--format {fmt}" in proc.stdout
    assert not (project / "README.md").exists()  # echo regenerated nothing
