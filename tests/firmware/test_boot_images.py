"""Images that boot: code placed in RAM runs after a copy from the boot region (in QEMU,
bit-exact with TFLM); images spanning regions far apart are written one .bin per region; an
external flash region is programmed only by a runner with an external loader; and the boards'
post-link image steps (RP2040 boot2 + UF2, ESP32-C3 app image, MCUboot) produce what the boot
ROM or boot loader takes, checked with independent code or the vendors' own tools."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from microbuild import api
from microbuild.boards import load_board
from microbuild.device.runners import FirmwareImage, FlashError, OpenocdRunner, StlinkRunner
from microbuild.errors import BuildError, FitError
from microbuild.firmware.image_steps.rp2040_boot2 import crc32_boot_rom

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
DS_CNN = MODELS / "ds_cnn.tflite"
TINY = MODELS / "tiny_fc.tflite"


def _boards(tmp_path, monkeypatch, **files: str) -> None:
    folder = tmp_path / "boards"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)


def _symbols(elf: Path) -> dict[str, int]:
    with open(elf, "rb") as f:
        table = ELFFile(f).get_section_by_name(".symtab")
        return {s.name: s["st_value"] for s in table.iter_symbols() if s.name}


def _section(elf: Path, name: str) -> tuple[int, int]:
    """(run address, load address) of a section."""
    with open(elf, "rb") as f:
        e = ELFFile(f)
        s = e.get_section_by_name(name)
        for seg in e.iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg.section_in_segment(s):
                return s["sh_addr"], seg["p_paddr"] + s["sh_addr"] - seg["p_vaddr"]
    raise AssertionError(name)


# --- code placed in RAM ----------------------------------------------------------------------

@pytest.mark.parametrize("toolchain", [None, "clang"])
def test_code_in_ram_boots_from_its_load_image_and_runs_bit_exact(tmp_path, monkeypatch,
                                                                  toolchain):
    """AN500 with code and vector table in PSRAM (0x60000000): QEMU loads the ELF at its load
    addresses, i.e. into the code region at 0, and PSRAM stays empty until the reset handler
    (run from the code region) copies the code there and points VTOR at the copied table."""
    _boards(tmp_path, monkeypatch, **{"an500-textram": (
        "name: an500-textram\nextends: mps2-an500\ntitle: AN500, code in PSRAM\n"
        "memory:\n  placement:\n    text: psram\n")})
    build = api.build_firmware("an500-textram", [DS_CNN], tmp_path / "out", toolchain=toolchain)
    psram, code = (load_board("an500-textram").regions[n] for n in ("psram", "code"))
    symbols = _symbols(build.elf)
    run, load = _section(build.elf, ".mb_vectors")
    assert psram.origin <= run < psram.end and load == code.origin
    run, load = _section(build.elf, ".text")
    assert psram.origin <= run < psram.end and code.origin <= load < code.end
    assert psram.origin <= symbols["main"] < psram.end
    assert code.origin <= symbols["mb_reset_handler"] < code.end
    # The image (what the core reads at reset) starts with SP and the reset handler in code.
    sp, reset = struct.unpack("<II", build.binary.read_bytes()[:8])
    assert reset & ~1 == symbols["mb_reset_handler"] & ~1
    assert build.binary.stat().st_size < 128 * 1024  # not a file spanning 0 .. 0x60000000
    regions = {r["name"]: r for r in build.size["regions"]}
    assert (".text", "load") in {(c["section"], c["role"]) for c in regions["code"]
                                 ["contributions"]}
    result = api.run_firmware(build, timeout=120)
    np.testing.assert_array_equal(result.outputs["ds_cnn"][0],
                                  run_tflm(DS_CNN, build.inputs("ds_cnn"))[0])


def test_stm32f746_code_in_itcm_gets_its_image_in_flash(tmp_path, monkeypatch):
    """The case that built a 134 MB .bin with nothing in flash: now the image is in flash."""
    _boards(tmp_path, monkeypatch, **{"f746-itcm": (
        "name: f746-itcm\nextends: stm32f746\nmemory:\n  placement:\n    text: itcm\n")})
    build = api.build_firmware("f746-itcm", [TINY], tmp_path / "out")
    assert build.size["fits"]
    data = build.binary.read_bytes()
    assert len(data) < 64 * 1024
    sp, reset = struct.unpack("<II", data[:8])
    assert 0x08000000 <= reset < 0x08100000 and 0x20000000 < sp <= 0x20010000
    run, load = _section(build.elf, ".text")
    assert run < 16 * 1024 and load >= 0x08000000


# --- regions far apart -------------------------------------------------------------------------

QSPI_BOARD = ("name: f746-qspi\nextends: stm32f746\nmemory:\n  regions:\n"
              "    qspi: {origin: 0x90000000, length: 16M, access: rx, external: true,\n"
              "           description: QSPI flash}\n"
              "  placement:\n    weights: qspi\n"
              "flash:\n  - runner: stlink\n  - runner: openocd\n"
              "    args: {config: [board/stm32f7discovery.cfg]}\n")


def test_weights_in_qspi_give_one_bin_per_region_and_a_hex_for_all(tmp_path, monkeypatch):
    _boards(tmp_path, monkeypatch, **{"f746-qspi": QSPI_BOARD})
    lines = []
    build = api.build_firmware("f746-qspi", [DS_CNN], tmp_path / "out", progress=lines.append)
    assert build.binary is None and not (tmp_path / "out" / "firmware.bin").exists()
    assert set(build.region_binaries) == {"flash", "qspi"}
    flash_bin, qspi_bin = build.region_binaries["flash"], build.region_binaries["qspi"]
    assert flash_bin.name == "firmware.flash.bin" and qspi_bin.name == "firmware.qspi.bin"
    assert len(qspi_bin.read_bytes()) == build.size["weights_bytes"]
    assert len(flash_bin.read_bytes()) < 64 * 1024
    with open(build.elf, "rb") as f:
        weights = ELFFile(f).get_section_by_name(".mb_weights").data()
    assert qspi_bin.read_bytes() == weights
    log = "\n".join(lines)
    assert "one .bin per region" in log and "firmware.qspi.bin" in log
    # Intel HEX: extended linear address records for both 0x0800xxxx and 0x9000xxxx.
    uppers = set(re.findall(r"^:02000004([0-9A-F]{4})", build.hex.read_text(), re.M))
    assert {"0800", "9000"} <= uppers


def test_external_region_needs_a_runner_with_an_external_loader(tmp_path, monkeypatch):
    _boards(tmp_path, monkeypatch, **{"f746-qspi": QSPI_BOARD})
    build = api.build_firmware("f746-qspi", [TINY], tmp_path / "out")
    board = load_board("f746-qspi")
    image = FirmwareImage.from_build(build)
    with pytest.raises(FlashError) as refused:
        StlinkRunner(board).flash(image)  # refused before st-flash would run
    message = str(refused.value)
    assert "external flash region 'qspi' (0x90000000" in message
    assert "stlink programs the chip's internal flash only" in message
    assert "openocd" in message
    with pytest.raises(FlashError, match="add `external_loader` to runner openocd's args"):
        OpenocdRunner(board).flash(image)
    loader = tmp_path / "boards" / "qspi-bank.cfg"
    loader.write_text("flash bank qspi stmqspi 0x90000000 0 0 0 $_TARGETNAME 0xA0001000\n")
    runner = OpenocdRunner(board, {"external_loader": "qspi-bank.cfg"})
    runner.check_external_regions(image)  # accepted
    command = runner.flash_command(image)
    assert command[command.index(str(loader.resolve())) - 1] == "-f"


# --- RP2040: boot2 and UF2 -----------------------------------------------------------------------

def _crc32_mpeg2(data: bytes) -> int:
    """CRC-32/MPEG-2 from zlib's reflected CRC-32, by bit reversal: an independent check of
    crc32_boot_rom."""
    def reverse(value: int, bits: int) -> int:
        return int(f"{value:0{bits}b}"[::-1], 2)
    reflected = zlib.crc32(bytes(reverse(b, 8) for b in data)) ^ 0xFFFFFFFF
    return reverse(reflected, 32)


def test_boot_rom_crc_matches_crc32_mpeg2():
    assert crc32_boot_rom(b"123456789") == 0x0376E6E7  # the catalogued check value
    blob = bytes(range(252))
    assert crc32_boot_rom(blob) == _crc32_mpeg2(blob)


@pytest.mark.parametrize("toolchain", [None, "clang"])
def test_rp2040_pico_image_starts_with_boot2_and_has_a_uf2(tmp_path, toolchain):
    build = api.build_firmware("rp2040-pico", [TINY], tmp_path, toolchain=toolchain)
    data = build.binary.read_bytes()
    boot2 = data[:256]
    assert struct.unpack("<I", boot2[252:])[0] == _crc32_mpeg2(boot2[:252])
    # Our loader: SSI set for 03h reads (SPI_CTRLR0 = 0x03000218), then the vector table.
    assert struct.pack("<I", 0x03000218) in boot2[:252]
    assert struct.pack("<I", 0x10000100) in boot2[:252]
    sp, reset = struct.unpack("<II", data[256:264])
    assert 0x20000000 < sp <= 0x20042000 and reset & 1
    assert _symbols(build.elf)["mb_vectors"] == 0x10000100

    uf2 = next(p for p in build.boot_images if p.suffix == ".uf2")
    blob = uf2.read_bytes()
    assert len(blob) % 512 == 0
    count = len(blob) // 512
    payload = bytearray()
    for number in range(count):
        block = blob[number * 512:(number + 1) * 512]
        magic0, magic1, flags, address, size, index, total, family = struct.unpack(
            "<8I", block[:32])
        assert (magic0, magic1) == (0x0A324655, 0x9E5D5157)
        assert struct.unpack("<I", block[508:])[0] == 0x0AB16F30
        assert flags & 0x2000 and family == 0xE48BFF56
        assert (index, total, size) == (number, count, 256)
        assert address == 0x10000000 + 256 * number
        payload += block[32:32 + size]
    assert payload[:len(data)] == data and not any(payload[len(data):])


# --- ESP32-C3 --------------------------------------------------------------------------------

def test_esp32c3_app_image_is_accepted_by_esptool(tmp_path):
    lines = []
    build = api.build_firmware("esp32c3-devkitm", [DS_CNN], tmp_path, progress=lines.append)
    image = next(p for p in build.boot_images if p.name == "firmware.app-image.bin")
    info = subprocess.run([sys.executable, "-m", "esptool", "image-info", str(image)],
                          capture_output=True, text=True)
    assert info.returncode == 0, info.stdout + info.stderr
    assert "ESP32-C3" in info.stdout and "Checksum" in info.stdout
    assert "(valid)" in info.stdout and "invalid" not in info.stdout.lower()
    entry = int(re.search(r"Entry point: (0x[0-9a-f]+)", info.stdout).group(1), 16)
    assert entry == _symbols(build.elf)["_start"]
    assert "DROM" in info.stdout and "IROM" in info.stdout
    # The fit report counts the flash behind the two windows once.
    regions = {r["name"]: r for r in build.size["regions"]}
    device = build.size["devices"][0]
    assert device["windows"] == ["irom", "drom"]
    assert device["used"] == regions["irom"]["used"] + regions["drom"]["used"]
    # Regions far apart (0x3C.., 0x3F.., 0x42..): no giant .bin.
    assert build.binary is None and set(build.region_binaries) == {"irom", "drom", "dram"}
    assert "app image" in "\n".join(lines)


def test_esp32c3_windows_that_each_fit_but_not_together_overflow_the_flash(tmp_path,
                                                                           monkeypatch):
    _boards(tmp_path, monkeypatch, **{"c3-small": (
        "name: c3-small\nextends: esp32c3-devkitm\nmemory:\n  regions:\n"
        "    irom: {origin: 0x42000020, length: 32K, access: rx, window_of: flash}\n"
        "    drom: {origin: 0x3C000020, length: 32K, access: r, window_of: flash}\n")})
    with pytest.raises(FitError, match=r"flash \(= irom \+ drom\)"):
        api.build_firmware("c3-small", [DS_CNN], tmp_path / "out")


# --- MCUboot -------------------------------------------------------------------------------

def test_mcuboot_image_is_signed_and_verified_by_imgtool(tmp_path, monkeypatch):
    key = tmp_path / "boards" / "signing-key.pem"
    key.parent.mkdir()
    subprocess.run([sys.executable, "-m", "imgtool.main", "keygen", "-k", str(key), "-t",
                    "ecdsa-p256"], check=True, capture_output=True)
    # MCUboot in the first 128 KiB, the slot at 0x08020000, the firmware after its header.
    _boards(tmp_path, monkeypatch, **{"f746-mcuboot": (
        "name: f746-mcuboot\nextends: stm32f746\nmemory:\n  regions:\n"
        "    flash: {origin: 0x08020200, length: 0x5FE00, access: rx}\n"
        "image:\n  - {step: mcuboot, key: signing-key.pem, header_size: 0x200, "
        "slot_size: 0x60000, version: 1.2.3}\n")})
    build = api.build_firmware("f746-mcuboot", [TINY], tmp_path / "out")
    signed = next(p for p in build.boot_images if p.name == "firmware.signed.bin")
    verify = subprocess.run([sys.executable, "-m", "imgtool.main", "verify", "-k", str(key),
                             str(signed)], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "correctly validated" in verify.stdout and "1.2.3" in verify.stdout
    assert struct.unpack("<I", signed.read_bytes()[:4])[0] == 0x96F3B83D  # MCUboot image magic
    assert signed.read_bytes()[0x200:0x200 + 64] == build.binary.read_bytes()[:64]
    # Another key does not verify it.
    other = tmp_path / "other.pem"
    subprocess.run([sys.executable, "-m", "imgtool.main", "keygen", "-k", str(other), "-t",
                    "ecdsa-p256"], check=True, capture_output=True)
    assert subprocess.run([sys.executable, "-m", "imgtool.main", "verify", "-k", str(other),
                           str(signed)], capture_output=True).returncode != 0


def test_mcuboot_without_its_key_says_how_to_make_one(tmp_path, monkeypatch):
    _boards(tmp_path, monkeypatch, **{"f746-nokey": (
        "name: f746-nokey\nextends: stm32f746\n"
        "image:\n  - {step: mcuboot, key: missing.pem, header_size: 0x200, "
        "slot_size: 0x60000}\n")})
    with pytest.raises(BuildError, match=r"missing.pem does not exist.*imgtool keygen"):
        api.build_firmware("f746-nokey", [TINY], tmp_path / "out")
