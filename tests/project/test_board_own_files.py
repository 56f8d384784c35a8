"""A board that brings its own driver file (the built-in lm3s6965evb: its PL011 console driver
lives beside its YAML) in generated projects: the file is copied beside the project's board YAML,
the project's own tool compiles it, and the firmware runs in QEMU bit-exact with TFLM. (The make
format, with a user's board folder, is in tests/firmware/test_board_drivers_qemu.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from microbuild.boards import load_board
from microbuild.project import generate_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import TINY_FC, check_outputs  # noqa: E402

BOARD = "lm3s6965evb"


@pytest.mark.parametrize("fmt", ["platformio", "scons"])
def test_project_compiles_the_board_s_own_console_driver(fmt, tmp_path, pio):
    project = tmp_path / "project"
    generate_project(BOARD, TINY_FC, fmt, project)
    copied = project / "board" / "src" / "pl011_console.c"
    assert copied.read_bytes() == load_board(BOARD).local_sources["console"].read_bytes()
    assert "driver: src/pl011_console.c" in (project / "board" / f"{BOARD}.yaml").read_text()
    # The self-test (outputs records compared with TFLM) rather than the application skeleton:
    # PlatformIO's <board>-self-test environment, SCons' SELF_TEST=1.
    if fmt == "platformio":
        env = f"{BOARD}-self-test"
        pio(project, "run", "-e", env)
        objects = project / ".pio" / "build" / env / "microbuild" / "board"
        assert (objects / "console_pl011_console.o").is_file()
        proc = pio(project, "run", "-e", env, "-t", "exec", check=False)
        console, status = proc.stdout, proc.returncode
    else:
        scons = [sys.executable, "-m", "SCons", "-Q"]
        subprocess.run(scons + ["-j2", "SELF_TEST=1"], cwd=project, check=True,
                       capture_output=True, timeout=300)
        assert list((project / "build").rglob("console_pl011_console.o"))
        proc = subprocess.run(scons + ["run", "SELF_TEST=1"], cwd=project, capture_output=True,
                              text=True,
                              timeout=120)
        console, status = proc.stdout, proc.returncode
    assert "qemu-system-arm -M lm3s6965evb" in console
    check_outputs(console, status, BOARD, "tiny_fc", TINY_FC)
