"""Where a firmware boots from: memory.boot, code placed in RAM, and the refusals when the image
could not survive a reset; image step settings that cannot work."""

from __future__ import annotations

import pytest

from microbuild import api
from microbuild.boards import load_board
from microbuild.errors import BoardError
from microbuild.firmware import image_steps
from microbuild.firmware.linker_script import linker_script


def _board(tmp_path, name: str, text: str):
    folder = tmp_path / "boards"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return path


def test_code_in_itcm_boots_from_flash_with_a_copy(tmp_path):
    """stm32f746 with text in ITCM: the boot region is its one flash; the vector table and code
    run in ITCM, their load images are in flash, and the copy table lists them."""
    path = _board(tmp_path, "f746-itcm", "name: f746-itcm\nextends: stm32f746\n"
                  "memory:\n  placement:\n    text: itcm\n")
    board = load_board(str(path))
    assert board.boot_region.name == "flash"
    script = linker_script(board)
    assert ".mb_vectors : ALIGN(4) { KEEP(*(.mb_vectors)) } > itcm AT> flash" in script
    assert ".mb_boot : ALIGN(4) { *(.mb_boot .mb_boot.*) } > flash" in script
    assert "LONG(LOADADDR(.mb_vectors)) LONG(ADDR(.mb_vectors))" in script
    assert "LONG(LOADADDR(.text)) LONG(ADDR(.text))" in script
    # The tables the reset handler reads before copying stay in flash.
    assert "__mb_copy_table_end = .;\n    } > flash" in script


def test_default_boards_keep_code_where_it_runs():
    board = load_board("stm32f746")
    assert board.boot_region.name == "flash"
    script = linker_script(board)
    assert "LOADADDR(.text)" not in script and "LOADADDR(.mb_vectors)" not in script
    # RAM-only emulated board: QEMU loads RAM directly, nothing is copied.
    virt = load_board("riscv32-virt")
    assert virt.boot_region.name == "ram"
    assert "AT>" not in linker_script(virt)


def test_code_in_ram_without_a_non_volatile_region_is_refused(tmp_path):
    path = _board(tmp_path, "ramonly", "name: ramonly\nextends: riscv32-virt\n"
                  "flash:\n  - runner: openocd\n    args: {config: [board/x.cfg]}\n")
    problems = [str(p) for p in api.validate_board_files([path])]
    assert len(problems) == 1, problems
    assert "memory.placement.text" in problems[0]
    assert "no non-volatile region to boot from" in problems[0]
    assert "'ram'" in problems[0]


def test_code_in_ram_with_several_flash_regions_needs_memory_boot(tmp_path):
    text = ("name: twoflash\nextends: stm32f746\nmemory:\n  regions:\n"
            "    bank2: {origin: 0x08100000, length: 1M, access: rx}\n"
            "  placement:\n    text: itcm\n")
    path = _board(tmp_path, "twoflash", text)
    problems = [str(p) for p in api.validate_board_files([path])]
    assert len(problems) == 1 and "flash, bank2" in problems[0], problems
    assert "memory.boot" in problems[0]
    _board(tmp_path, "twoflash", text + "  boot: bank2\n")
    assert api.validate_board_files([path]) == []
    assert load_board(str(path)).boot_region.name == "bank2"


def test_memory_boot_must_name_a_region(tmp_path):
    path = _board(tmp_path, "badboot", "name: badboot\nextends: stm32f746\n"
                  "memory:\n  boot: flsh\n")
    problems = [str(p) for p in api.validate_board_files([path])]
    assert len(problems) == 1 and "memory.boot" in problems[0]
    assert "did you mean flash" in problems[0]


def test_external_region_is_not_a_boot_candidate(tmp_path):
    """Code in RAM with only an external QSPI flash besides it: nothing to boot from."""
    path = _board(tmp_path, "qspionly", "name: qspionly\nextends: riscv32-virt\nmemory:\n"
                  "  regions:\n    qspi: {origin: 0x20000000, length: 16M, access: rx, "
                  "external: true}\n"
                  "flash:\n  - runner: openocd\n    args: {config: [board/x.cfg]}\n")
    problems = [str(p) for p in api.validate_board_files([path])]
    assert len(problems) == 1 and "no non-volatile region" in problems[0], problems


def test_image_step_settings_are_checked(tmp_path):
    path = _board(tmp_path, "nofamily", "name: nofamily\nextends: rp2040-pico\n"
                  "image:\n  - {step: uf2}\n")
    with pytest.raises(BoardError, match=r"image\[0\].*uf2 step needs family_id.*0xe48bff56"):
        image_steps.steps(load_board(str(path)))
    path = _board(tmp_path, "boot2f7", "name: boot2f7\nextends: stm32f746\n"
                  "image:\n  - {step: rp2040_boot2}\n")
    with pytest.raises(BoardError, match=r"rp2040_boot2 is the RP2040's flash second stage.*"
                                         r"armv7e-m, boot region flash at 0x08000000"):
        image_steps.steps(load_board(str(path)))
    path = _board(tmp_path, "nokey", "name: nokey\nextends: stm32f746\n"
                  "image:\n  - {step: mcuboot, header_size: 512}\n")
    with pytest.raises(BoardError, match="mcuboot step needs key, slot_size"):
        image_steps.steps(load_board(str(path)))
    problems = [str(p) for p in api.validate_board_files([_board(
        tmp_path, "badstep", "name: badstep\nextends: stm32f746\nimage:\n  - {step: uf3}\n")])]
    assert len(problems) == 1 and "'uf3' is not one of" in problems[0] and "uf2" in problems[0]


def test_esp32c3_windows_onto_one_flash():
    board = load_board("esp32c3-devkitm")
    regions = board.regions
    assert regions["irom"].window_of == regions["drom"].window_of == "flash"
    assert regions["irom"].origin == 0x42000020 and regions["drom"].origin == 0x3C000020
    assert board.boot_region.name == "irom"
    assert board.flash_bytes == regions["irom"].length  # one flash, not two
    # The ESP boot loader puts .data in RAM itself: nothing is copied at reset.
    assert image_steps.loader_places_sections(board)
    script = linker_script(board)
    assert "LOADADDR" not in script
    assert ".mb_start : ALIGN(4) { KEEP(*(.mb_start)) } > irom" in script
