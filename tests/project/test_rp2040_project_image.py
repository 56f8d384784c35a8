"""Generated RP2040 projects make a bootable image, as microbuild's own build does: boot2 (the
second-stage loader with the boot ROM's CRC) in the first 256 bytes of flash, and a .uf2 of the
loaded bytes for the BOOTSEL drive. `make` (boot2 assembled when generating, the .uf2 by a
standard-library script), `scons` and `pio run` on microbuild's platform (microbuild's own build
steps) give the same boot2, and each .uf2 is exactly what microbuild's uf2 step makes of that
project's ELF."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from microbuild.boards import load_board
from microbuild.firmware.image_steps.rp2040_boot2 import crc32_boot_rom
from microbuild.firmware.image_steps.uf2 import RP2040_FAMILY_ID, uf2_blocks
from microbuild.firmware.images import region_images
from microbuild.project import generate_project

REPO = Path(__file__).resolve().parents[2]
TINY_FC = REPO / "tests" / "models" / "tiny_fc.tflite"
FLASH = 0x10000000
FORMATS = ["make", "scons", "platformio"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, pio) -> dict[str, Path]:
    """{format: build folder} of the make, scons and platformio (microbuild's platform)
    projects for the Pico."""
    root = tmp_path_factory.mktemp("pico")
    folders = {}
    for fmt, command in (("make", ["make", "-j2"]),
                         ("scons", [sys.executable, "-m", "SCons", "-Q", "-j2"])):
        project = root / fmt
        generate_project("rp2040-pico", TINY_FC, fmt, project)
        done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        folders[fmt] = project / "build"
    generate_project("rp2040-pico", TINY_FC, "platformio", root / "platformio")
    pio(root / "platformio", "run", "-e", "rp2040-pico")
    folders["platformio"] = root / "platformio" / ".pio" / "build" / "rp2040-pico"
    return folders


@pytest.mark.parametrize("fmt", FORMATS)
def test_project_image_starts_with_boot2_and_its_crc(built, fmt):
    image = (built[fmt] / "firmware.bin").read_bytes()
    boot2 = image[:256]
    assert any(boot2[:252]), "no second-stage loader at the start of flash"
    assert struct.unpack("<I", boot2[252:])[0] == crc32_boot_rom(boot2[:252])
    # The vector table follows at 0x10000100: its reset entry points into flash (Thumb bit set).
    initial_sp, reset = struct.unpack("<2I", image[256:264])
    assert 0x20000000 <= initial_sp <= 0x20042000 and reset & 1
    assert FLASH < reset < FLASH + len(image)


def test_every_format_carries_the_same_boot2(built):
    boot2 = {fmt: (built[fmt] / "firmware.bin").read_bytes()[:256] for fmt in FORMATS}
    assert boot2["make"] == boot2["scons"] == boot2["platformio"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_project_uf2_is_microbuilds_uf2_of_its_elf(built, fmt):
    uf2 = (built[fmt] / "firmware.uf2").read_bytes()
    board = load_board("rp2040-pico")
    elf = built[fmt] / "firmware.elf"
    assert uf2 == uf2_blocks(sorted(region_images(elf, board).values()), RP2040_FAMILY_ID)
    # ... which holds the .bin page by page from the start of flash, for the RP2040's family.
    image = (built[fmt] / "firmware.bin").read_bytes()
    blocks = [uf2[i:i + 512] for i in range(0, len(uf2), 512)]
    assert len(blocks) == -(-len(image) // 256)
    for number, block in enumerate(blocks):
        magic0, magic1, flags, address, size, index, count, family = \
            struct.unpack("<8I", block[:32])
        assert (magic0, magic1, block[-4:]) == (0x0A324655, 0x9E5D5157,
                                                 struct.pack("<I", 0x0AB16F30))
        assert (address, size, index, count, family) == \
            (FLASH + 256 * number, 256, number, len(blocks), RP2040_FAMILY_ID)
        assert block[32:32 + 256].rstrip(b"\0") == image[256 * number:256 * number + 256] \
            .rstrip(b"\0")
