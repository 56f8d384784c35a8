"""The firmware note, `flash` choosing and checking what it flashes, and `clean`, as a user types
them in a project folder: real builds, the real st-flash failing on the missing probe."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from microbuild import cli
from microbuild.api import build_firmware
from microbuild.firmware import last_build
from microbuild.firmware.note import SECTION, read_note

REPO = Path(__file__).resolve().parents[2]
TINY_FC = REPO / "tests" / "models" / "tiny_fc.tflite"
DS_CNN = REPO / "tests" / "models" / "ds_cnn.tflite"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A user's folder: microbuild runs here and builds into ./build."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _build(board: str, model: Path, executor: str = "aot") -> int:
    return cli.main(["build", "--board", board, "--model", str(model), "--executor", executor])


def _strip_note(elf: Path, to: Path) -> Path:
    subprocess.run(["arm-none-eabi-objcopy", "--remove-section", SECTION, str(elf), str(to)],
                   check=True)
    return to


# --- the note -------------------------------------------------------------------------------

def test_the_note_names_the_board_models_and_executor_and_takes_no_memory(tmp_path):
    build = build_firmware("stm32f746", [TINY_FC, DS_CNN], tmp_path / "fw", executor="rpc")
    note = read_note(build.elf)
    assert note is not None
    assert (note.board, note.models, note.executor, note.toolchain) == (
        "stm32f746", ["tiny_fc", "ds_cnn"], "rpc", "gcc-arm-none-eabi")
    assert len(note.build_id) == 16 and int(note.build_id, 16) >= 0
    with open(build.elf, "rb") as f:
        elf = ELFFile(f)
        section = elf.get_section_by_name(SECTION)
        assert section["sh_type"] == "SHT_NOTE"
        assert not section["sh_flags"] & SH_FLAGS.SHF_ALLOC  # in no memory region
        offset, end = section["sh_offset"], section["sh_offset"] + section["sh_size"]
        for segment in elf.iter_segments():
            if segment["p_type"] == "PT_LOAD":
                assert end <= segment["p_offset"] or offset >= (segment["p_offset"]
                                                                + segment["p_filesz"])
    # The .bin is the image of the ELF without its note, byte for byte.
    stripped = _strip_note(build.elf, tmp_path / "stripped.elf")
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", str(stripped),
                    str(tmp_path / "stripped.bin")], check=True)
    assert build.binary.read_bytes() == (tmp_path / "stripped.bin").read_bytes()
    # The fit report does not count it.
    from microbuild.firmware.fit import analyze_elf

    assert analyze_elf(stripped, build.board).totals == build.size["totals"]


def test_the_build_id_is_the_image_same_bytes_same_id(tmp_path):
    one = build_firmware("mps2-an500", [TINY_FC], tmp_path / "one")
    two = build_firmware("mps2-an500", [TINY_FC], tmp_path / "two")
    other = build_firmware("mps2-an500", [TINY_FC], tmp_path / "seed1", seed=1)
    assert read_note(one.elf).build_id == read_note(two.elf).build_id
    assert read_note(other.elf).build_id != read_note(one.elf).build_id  # other embedded input


def test_host_executables_carry_the_note_too(tmp_path):
    build = build_firmware("host", [TINY_FC], tmp_path / "host")
    note = read_note(build.elf)
    assert note is not None and note.board == "host" and note.toolchain == "host-gcc"
    assert note.executor == "aot"
    # ... and they still run (the note is not loaded).
    run = subprocess.run([str(build.elf)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and "mb-aot end 0" in run.stdout


# --- flash ------------------------------------------------------------------------------------

def test_flash_takes_the_newest_build_says_what_it_is_and_fails_on_the_missing_probe(project,
                                                                                      capsys):
    assert _build("stm32f746", TINY_FC, "rpc") == 0
    assert _build("stm32f746", DS_CNN, "aot") == 0  # newer: this one is flashed
    capsys.readouterr()
    status = cli.main(["flash", "--board", "stm32f746", "--runner", "stlink"])
    err = capsys.readouterr().err
    assert status != 0
    aot_elf = (project / "build" / "stm32f746" / "firmware.elf").resolve()
    assert "board:    stm32f746" in err
    assert f"ds_cnn ({DS_CNN})" in err and "executor: aot (gcc-arm-none-eabi, build " in err
    assert f"elf:      {aot_elf}" in err and "(the last build)" in err
    assert "no probe found" in err and "Couldn't find any ST-Link" in err
    assert "Traceback" not in err
    # An RPC build afterwards is the one flashed next.
    assert _build("stm32f746", TINY_FC, "rpc") == 0
    capsys.readouterr()
    cli.main(["flash", "--board", "stm32f746", "--runner", "openocd"])
    err = capsys.readouterr().err
    assert "build/stm32f746-rpc/firmware.elf" in err and "executor: rpc" in err
    assert "tiny_fc" in err and "ds_cnn" not in err
    assert "runner openocd" in err and "no probe found" in err
    # Builds from before builds were recorded: the newest ELF in the board's folders.
    shutil.rmtree(project / "build" / "last-build")
    os.utime(project / "build" / "stm32f746" / "firmware.elf")  # the AOT one is newer now
    cli.main(["flash", "--board", "stm32f746", "--runner", "openocd"])
    err = capsys.readouterr().err
    assert "build/stm32f746/firmware.elf" in err and "executor: aot" in err
    assert "(the newest in build/; no build recorded)" in err and "no probe found" in err


def test_flash_refuses_an_elf_built_for_another_board(project, capsys):
    # Built under a deliberately long folder: the messages naming the ELF are longer than any
    # console width, and must still come out whole (one line each, not wrapped by rich).
    build = build_firmware("nucleo-f746zg", [TINY_FC], project / ("long-folder-" * 20) / "nucleo")
    status = cli.main(["flash", "--board", "stm32f746", "--runner", "stlink", "--firmware",
                       str(build.elf)])
    err = capsys.readouterr().err
    assert status == 1
    assert "was built for board 'nucleo-f746zg', not 'stm32f746'" in err and "--force" in err
    assert "st-flash" not in err and "Traceback" not in err
    # --force: flashed anyway (and st-flash finds no probe here).
    status = cli.main(["flash", "--board", "stm32f746", "--runner", "stlink", "--firmware",
                       str(build.elf), "--force"])
    err = capsys.readouterr().err
    assert status != 0
    assert "going ahead because of --force" in err and "no probe found" in err
    warning = next(line for line in err.splitlines() if line.startswith("warning:"))
    assert str(build.elf) in warning and warning.endswith("going ahead because of --force")


def test_flash_an_elf_with_no_note_says_so(project, capsys):
    build = build_firmware("stm32f746", [TINY_FC], project / "fw")
    bare = _strip_note(build.elf, project / "fw" / "bare.elf")
    assert read_note(bare) is None
    status = cli.main(["flash", "--board", "stm32f746", "--runner", "openocd", "--firmware",
                       str(bare)])
    err = capsys.readouterr().err
    assert status != 0
    assert "bare.elf has no .note.microbuild section" in err
    assert "its board cannot be checked" in err and "no probe found" in err


def test_flash_with_nothing_built_says_what_to_do(project, capsys):
    assert cli.main(["flash", "--board", "stm32f746"]) == 1
    err = capsys.readouterr().err
    assert "no firmware built for stm32f746 here" in err and "microbuild build" in err


# --- clean --------------------------------------------------------------------------------------

def test_clean_removes_every_executor_of_the_board_and_nothing_else(project, capsys):
    assert _build("mps2-an500", TINY_FC, "aot") == 0
    assert _build("mps2-an500", TINY_FC, "rpc") == 0
    assert _build("mps2-an385", TINY_FC, "aot") == 0
    outside = project / "elsewhere"
    assert cli.main(["build", "--board", "mps2-an500", "--model", str(TINY_FC), "-o",
                     str(outside)]) == 0  # the last build now: outside build/
    capsys.readouterr()
    assert cli.main(["clean", "--board", "mps2-an500"]) == 0
    printed = capsys.readouterr().out
    build = project / "build"
    for gone in (build / "mps2-an500", build / "mps2-an500-rpc",
                 build / "last-build" / "mps2-an500.json"):
        assert not gone.exists()
        assert f"removed {gone}" in printed.replace("\n", "")
    assert (build / "mps2-an385" / "firmware.elf").is_file()  # another board's build stays
    assert (outside / "firmware.elf").is_file()  # outside the build folder: untouched
    assert last_build.find("mps2-an385") is not None
    assert cli.main(["clean", "--board", "mps2-an500"]) == 0
    assert "nothing to clean for mps2-an500" in capsys.readouterr().out
    shutil.rmtree(outside)
