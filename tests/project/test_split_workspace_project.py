"""Generated projects for a board whose workspace is split across two regions: the Make and SCons
projects build with the board's generated linker script, their ELF has the model's workspace part
in the second region, and the self-test prints TFLM's outputs in QEMU. A Zephyr application,
which places the workspace with Zephyr's own script, refuses a split model."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from microbuild.boards import load_board
from microbuild.project import ProjectError, generate_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import MODELS, check_outputs, unprivileged  # noqa: E402

RESNET8 = MODELS / "resnet8.tflite"


def split_board(folder: Path) -> Path:
    """mps2-an500 with 36 KiB of data SSRAM (16 KiB of it stack: ResNet-8 does not fit it even
    row-streamed), then its PSRAM."""
    path = folder / "split-an500.yaml"
    path.write_text(textwrap.dedent("""
        name: split-an500
        extends: mps2-an500
        memory:
          regions:
            sram: {origin: 0x20000000, length: 36K, access: rwx}
          placement:
            workspace: [sram, psram]
        """).lstrip("\n"))
    return path


@pytest.mark.parametrize("fmt", ["make", "scons"])
def test_project_for_a_split_board_builds_and_runs_bit_exact(fmt):
    """Built as a user who is not root, in a folder that user owns (as test_build.py does)."""
    home = Path(tempfile.mkdtemp(prefix="mb-split-", dir="/tmp"))
    try:
        board_file = split_board(home)
        board = load_board(str(board_file))
        project = home / "project"
        generate_project(str(board_file), RESNET8, fmt, project)
        if fmt == "make":  # compiled when generated (SCons compiles it when it builds)
            header = (project / "generated" / "resnet8.h").read_text()
            assert "extern uint8_t resnet8_workspace_psram[];" in header
        if os.geteuid() == 0:
            os.chmod(home, 0o755)
            subprocess.run(["chown", "-R", "nobody:nogroup", str(home)], check=True)

        def user(command: list[str]) -> subprocess.CompletedProcess:
            command, env = unprivileged(command)
            env["HOME"] = str(home)
            return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                                  timeout=600)

        scons = [sys.executable, "-m", "SCons", "-Q"]
        built = user((["make", "-j2"] if fmt == "make" else scons + ["-j2"]) + ["SELF_TEST=1"])
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        with open(project / "build" / "firmware.elf", "rb") as f:
            symbols = {s.name: s["st_value"] for s in
                       ELFFile(f).get_section_by_name(".symtab").iter_symbols() if s.name}
        psram, sram = board.regions["psram"], board.regions["sram"]
        assert psram.origin <= symbols["resnet8_workspace_psram"] < psram.end
        assert sram.origin <= symbols["mb_aot_workspace_resnet8"] < sram.end
        proc = user((["make", "run"] if fmt == "make" else scons + ["run"]) + ["SELF_TEST=1"])
        check_outputs(proc.stdout, proc.returncode, str(board_file), "resnet8", RESNET8)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_zephyr_refuses_a_split_model(tmp_path):
    with pytest.raises(ProjectError) as info:
        generate_project(str(split_board(tmp_path)), RESNET8, "zephyr", tmp_path / "z")
    assert "its workspace is split across sram, psram" in str(info.value)
    assert "Zephyr's own linker script" in str(info.value)
