"""The flash runners beyond OpenOCD/ST-LINK/pyOCD/J-Link/avrdude: esptool, picotool, UF2 copy,
nrfjprog, nrfutil, probe-rs, dfu-util and STM32CubeProgrammer. For each: the command line it
builds, the message when its tool is missing, and how it reads the tool's failures; real runs of
the tools installed here (esptool from PyPI, dfu-util from Debian) with no board attached."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from microbuild.api import build_firmware, get_board
from microbuild.device.runners import (
    RUNNERS,
    DfuUtilRunner,
    EsptoolRunner,
    FirmwareImage,
    FlashError,
    FlashToolRunner,
    NrfjprogRunner,
    NrfutilRunner,
    PicotoolRunner,
    ProbeRsRunner,
    Stm32CubeProgrammerRunner,
    Uf2Runner,
)
from microbuild.device.runners import uf2 as uf2_module
from microbuild.errors import MicrobuildError

REPO = Path(__file__).resolve().parents[2]
TINY_FC = REPO / "tests" / "models" / "tiny_fc.tflite"
NEW_RUNNERS = {"esptool": EsptoolRunner, "picotool": PicotoolRunner, "uf2": Uf2Runner,
               "nrfjprog": NrfjprogRunner, "nrfutil": NrfutilRunner, "probe-rs": ProbeRsRunner,
               "dfu-util": DfuUtilRunner, "stm32cubeprogrammer": Stm32CubeProgrammerRunner}


@pytest.fixture
def paper_image(tmp_path):
    out = tmp_path / "fw"
    return FirmwareImage(out / "firmware.elf", out / "firmware.bin", out / "firmware.hex")


@pytest.fixture(scope="module")
def stm32_build(tmp_path_factory):
    return build_firmware("stm32f746", [TINY_FC], tmp_path_factory.mktemp("stm32f746-fw"))


def _flash_error(runner: FlashToolRunner, image: FirmwareImage, timeout: float = 60.0) -> str:
    with pytest.raises(FlashError) as info:
        runner.flash(image, timeout=timeout)
    assert isinstance(info.value, MicrobuildError)
    return str(info.value)


def test_registered_by_name_so_board_yaml_can_name_them():
    for name, cls in NEW_RUNNERS.items():
        assert RUNNERS[name] is cls and cls.name == name
        assert issubclass(cls, FlashToolRunner) and cls.program and cls.install_hint


def test_a_board_yaml_naming_a_new_runner_validates(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    board = tmp_path / "boards" / "mypico.yaml"
    board.parent.mkdir()
    board.write_text("name: mypico\nextends: rp2040-pico\nflash:\n  - runner: picotool\n"
                     "  - runner: uf2\n    args: {label: RPI-RP2}\n")
    assert [r.runner for r in get_board("mypico").runners] == ["picotool", "uf2"]


# --- command lines ------------------------------------------------------------------------------

def test_command_lines(paper_image):
    elf, binary, hex_ = (str(p.resolve()) for p in (paper_image.elf, paper_image.binary,
                                                    paper_image.hex))
    f746, nrf, pico = get_board("stm32f746"), get_board("nrf52840dk"), get_board("rp2040-pico")
    cases = [
        (EsptoolRunner(f746, args={"chip": "esp32c3", "port": "/dev/ttyACM0"}),
         ["esptool", "--chip", "esp32c3", "--port", "/dev/ttyACM0", "--baud", "460800",
          "write-flash", "0x0", binary]),
        (EsptoolRunner(f746, args={"address": "0x10000", "baud": 921600}),
         ["esptool", "--chip", "auto", "--baud", "921600", "write-flash", "0x10000", binary]),
        (PicotoolRunner(pico), ["picotool", "load", "-x", elf, "-t", "elf"]),
        (PicotoolRunner(pico, args={"force": True, "bus": 1, "address": 7}),
         ["picotool", "load", "-f", "-x", elf, "-t", "elf", "--bus", "1", "--address", "7"]),
        (NrfjprogRunner(nrf), ["nrfjprog", "-f", "NRF52", "--program", hex_, "--sectorerase",
                               "--verify", "--reset"]),
        (NrfjprogRunner(nrf, args={"snr": 683000001, "erase": "chiperase"}),
         ["nrfjprog", "-f", "NRF52", "--snr", "683000001", "--program", hex_, "--chiperase",
          "--verify", "--reset"]),
        (NrfutilRunner(nrf, args={"serial": "1050065027"}),
         ["nrfutil", "device", "program", "--firmware", hex_, "--options",
          "chip_erase_mode=ERASE_RANGES_TOUCHED_BY_FIRMWARE,verify=VERIFY_READ,reset=RESET_SYSTEM",
          "--serial-number", "1050065027"]),
        (ProbeRsRunner(f746, args={"chip": "STM32F746NGHx"}),
         ["probe-rs", "download", "--chip", "STM32F746NGHx", "--verify", "--reset", elf]),
        (ProbeRsRunner(f746, args={"chip": "STM32F746NGHx", "probe": "0483:374b",
                                   "speed_khz": 4000, "reset": False}),
         ["probe-rs", "download", "--chip", "STM32F746NGHx", "--probe", "0483:374b",
          "--speed", "4000", "--verify", elf]),
        # The address defaults to the origin of the region .text is placed in.
        (DfuUtilRunner(f746), ["dfu-util", "-d", "0483:df11", "-a", "0", "-s",
                               "0x08000000:leave", "-D", binary]),
        (DfuUtilRunner(f746, args={"address": 0x08020000, "leave": False, "serial": "X1"}),
         ["dfu-util", "-d", "0483:df11", "-a", "0", "-S", "X1", "-s", "0x08020000", "-D",
          binary]),
        (Stm32CubeProgrammerRunner(f746), ["STM32_Programmer_CLI", "-c", "port=SWD", "-w", elf,
                                           "-v", "-rst"]),
        (Stm32CubeProgrammerRunner(f746, args={"serial": "066B", "mode": "UR", "freq_khz": 4000}),
         ["STM32_Programmer_CLI", "-c", "port=SWD", "sn=066B", "freq=4000", "mode=UR", "-w",
          elf, "-v", "-rst"]),
    ]
    for runner, expected in cases:
        assert runner.flash_command(paper_image) == expected, runner.name


def test_probe_descriptions_name_the_probe():
    f746, nrf, pico = get_board("stm32f746"), get_board("nrf52840dk"), get_board("rp2040-pico")
    assert NrfjprogRunner(nrf).probe_description() == \
        "a SEGGER J-Link (USB 1366:1015) wired to the nRF chip's SWD"
    assert Stm32CubeProgrammerRunner(f746).probe_description() == \
        "an ST-LINK (USB 0483:374b) over SWD"
    assert ProbeRsRunner(f746, args={"chip": "x"}).probe_description() == \
        "an ST-LINK (USB 0483:374b)"
    assert "BOOTSEL" in PicotoolRunner(pico).probe_description()
    assert DfuUtilRunner(f746).probe_description() == \
        "a USB DFU bootloader (0483:df11, the STM32 system bootloader)"
    assert EsptoolRunner(f746, args={"chip": "esp32c3", "port": "/dev/ttyACM3"}) \
        .probe_description() == "esp32c3's ROM bootloader on serial port /dev/ttyACM3"


def test_probe_rs_without_a_chip_says_what_to_add(paper_image):
    with pytest.raises(FlashError, match=r"no `chip`.*probe-rs chip list"):
        ProbeRsRunner(get_board("stm32f746")).flash_command(paper_image)


# --- tools that are not installed ----------------------------------------------------------------

@pytest.mark.parametrize("cls,hint", [
    (PicotoolRunner, "github.com/raspberrypi/picotool"),
    (NrfjprogRunner, "nRF Command Line Tools"),
    (NrfutilRunner, "nrfutil install device"),
    (ProbeRsRunner, "cargo install probe-rs-tools"),
    (Stm32CubeProgrammerRunner, "STM32_Programmer_CLI, on PATH"),
    (DfuUtilRunner, "sudo apt-get install dfu-util"),
    (EsptoolRunner, "pip install esptool"),
])
def test_missing_tool_says_how_to_install_it(cls, hint, stm32_build, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    # esptool must not be found beside this interpreter or as a module either.
    monkeypatch.setattr("microbuild.device.runners.esptool.module_command", lambda module: None)
    monkeypatch.setattr("sys.executable", str(tmp_path / "python"))
    image = FirmwareImage.from_build(stm32_build)
    hex_image = FirmwareImage(image.elf, image.binary, image.hex)
    runner = cls(get_board("stm32f746"), args={"chip": "STM32F746NGHx"}
                 if cls is ProbeRsRunner else None)
    message = _flash_error(runner, hex_image)
    assert f"with runner {cls.name} failed: its tool {cls.program} is not installed" in message
    assert f"`{cls.program}` is not on PATH" in message
    assert hint in message
    assert f"looked for: {runner.probe_description()}" in message
    assert "(not run)" in message  # the command it would have run is shown


# --- real tools, no board -----------------------------------------------------------------------

def test_esptool_on_a_port_that_does_not_exist(stm32_build, tmp_path):
    """esptool from PyPI, really run: the port names nothing, and our message says so."""
    runner = EsptoolRunner(get_board("stm32f746"),
                           args={"chip": "esp32c3", "port": str(tmp_path / "ttyNOPE")})
    assert runner.executable(), "esptool is not installed: pip install -e '.[test]' installs it"
    message = _flash_error(runner, FirmwareImage.from_build(stm32_build))
    assert f"the serial port {tmp_path / 'ttyNOPE'} does not exist" in message
    assert f"looked for: esp32c3's ROM bootloader on serial port {tmp_path / 'ttyNOPE'}" in message
    assert "exit code:  2" in message
    assert "esptool printed" in message and "A fatal error occurred" in message  # its own words
    assert "write-flash 0x0" in message and str(stm32_build.binary.resolve()) in message
    assert "What to do: plug the board in and give its port" in message


def test_dfu_util_without_a_board(stm32_build):
    assert shutil.which("dfu-util"), "dfu-util is not installed: sudo apt-get install dfu-util"
    runner = DfuUtilRunner(get_board("stm32f746"))
    message = _flash_error(runner, FirmwareImage.from_build(stm32_build))
    assert "failed: no USB DFU device 0483:df11 is connected" in message
    assert "| dfu-util: No DFU capable USB device available" in message
    assert "exit code:  74" in message
    assert "looked for: a USB DFU bootloader (0483:df11" in message
    assert "BOOT0 high" in message


# --- UF2 copy ----------------------------------------------------------------------------------

def _uf2_image(tmp_path) -> FirmwareImage:
    elf = tmp_path / "fw" / "firmware.elf"
    elf.parent.mkdir()
    elf.write_bytes(b"\x7fELF")
    elf.with_suffix(".uf2").write_bytes(b"UF2\n" * 128)
    return FirmwareImage(elf)


def test_uf2_copies_to_the_mounted_drive(tmp_path, monkeypatch):
    drive = tmp_path / "media" / "RPI-RP2"
    drive.mkdir(parents=True)
    (drive / "INFO_UF2.TXT").write_text("UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\n"
                                        "Board-ID: RPI-RP2\n")
    (tmp_path / "media" / "USBSTICK").mkdir()  # another drive, not a UF2 one
    monkeypatch.setattr(uf2_module, "mounted_folders",
                        lambda: [tmp_path / "media" / "USBSTICK", drive])
    image = _uf2_image(tmp_path)
    runner = Uf2Runner(get_board("rp2040-pico"))
    assert runner.find_drive() == drive
    run = runner.flash(image)
    assert run.status == 0
    assert (drive / "firmware.uf2").read_bytes() == image.elf.with_suffix(".uf2").read_bytes()
    assert run.command[-1] == f"{drive}/"


def test_uf2_says_when_no_drive_is_mounted(tmp_path, monkeypatch):
    monkeypatch.setattr(uf2_module, "mounted_folders", lambda: [tmp_path])
    message = _flash_error(Uf2Runner(get_board("rp2040-pico")), _uf2_image(tmp_path))
    assert "failed: no UF2 drive labelled RPI-RP2 is mounted" in message
    assert "BOOTSEL" in message and "`drive`" in message
    assert "command:" not in message  # nothing was run


def test_uf2_drive_arg_that_is_not_a_uf2_drive(tmp_path):
    message = _flash_error(Uf2Runner(get_board("rp2040-pico"), args={"drive": str(tmp_path)}),
                           _uf2_image(tmp_path))
    assert f"{tmp_path} is not a mounted UF2 drive (it has no INFO_UF2.TXT)" in message


def test_uf2_without_a_uf2_file_says_how_to_make_one(tmp_path):
    image = FirmwareImage(tmp_path / "firmware.elf")
    message = _flash_error(Uf2Runner(get_board("rp2040-pico")), image)
    assert f"the firmware file {tmp_path / 'firmware.uf2'} does not exist" in message
    assert "picotool uf2 convert" in message


# --- reading the tools' failures -----------------------------------------------------------------

@pytest.mark.parametrize("cls,args,output,kind", [
    (EsptoolRunner, {}, "A fatal error occurred: Failed to connect to ESP32-C3: No serial data "
     "received.\n", "target"),
    (EsptoolRunner, {}, "A fatal error occurred: This chip is ESP32 not ESP32-C3. Wrong --chip "
     "argument?\n", "wrong-chip"),
    (PicotoolRunner, {}, "No accessible RP2040 devices in BOOTSEL mode were found.\n", "no-probe"),
    (PicotoolRunner, {}, "No accessible RP2040 devices in BOOTSEL mode were found.\n\nbut:\n\n"
     "Device at bus 1, address 16 appears to be a RP2040 device with a USB serial connection, so "
     "consider -f (or -F) to force reboot in order to run the command.\n", "not-bootsel"),
    (PicotoolRunner, {}, "No accessible RP2040 devices in BOOTSEL mode were found.\n\nbut:\n\n"
     "Device at bus 3, address 12 appears to be a RP2040 device in BOOTSEL mode, but\n    "
     "picotool was unable to connect\n", "usb-permission"),
    (NrfjprogRunner, {}, "ERROR: There is no debugger connected to the PC.\n", "no-probe"),
    (NrfjprogRunner, {}, "ERROR: Could not connect to target.\n", "target"),
    (NrfutilRunner, {}, "Error: Found 0 supported devices\n", "no-probe"),
    (ProbeRsRunner, {"chip": "x"}, "Error: No connected probes were found.\n", "no-probe"),
    (ProbeRsRunner, {"chip": "x"}, "error: unexpected argument '--reset' found\n",
     "old-probe-rs"),
    (DfuUtilRunner, {}, "dfu-util: Cannot open DFU device 0483:df11 found on devnum 5 "
     "(LIBUSB_ERROR_ACCESS)\n", "usb-permission"),
    (Stm32CubeProgrammerRunner, {}, "Error: No debug probe detected.\n", "no-probe"),
    (Stm32CubeProgrammerRunner, {}, "Error: No STM32 target found!\n", "target"),
])
def test_diagnosis(cls, args, output, kind, tmp_path):
    runner = cls(get_board("stm32f746"), args=args)
    diagnosis = runner.diagnose(output, FirmwareImage(tmp_path / "fw.elf", tmp_path / "fw.bin",
                                                      tmp_path / "fw.hex"))
    assert diagnosis.kind == kind
    assert diagnosis.headline and diagnosis.advice


def test_cli_flash_with_a_board_that_names_esptool(stm32_build, tmp_path, monkeypatch, capsys):
    """A user's board YAML names esptool; `microbuild flash --port` reaches the real esptool, and
    the CLI prints our one message (no traceback) and fails."""
    from microbuild.cli import main

    board = tmp_path / "boards" / "my-esp.yaml"
    board.parent.mkdir()
    board.write_text("name: my-esp\nextends: stm32f746\ntitle: esptool stand-in\nflash:\n"
                     "  - runner: esptool\n    args: {chip: esp32c3}\n")
    monkeypatch.chdir(tmp_path)
    port = tmp_path / "ttyUSB9"
    # --force: the ELF's note says stm32f746 (my-esp is a stand-in extending it).
    status = main(["flash", "--board", "my-esp", "--firmware", str(stm32_build.elf),
                   "--port", str(port), "--force"])
    err = capsys.readouterr().err
    assert status != 0
    assert f"with runner esptool failed: the serial port {port} does not exist" in err
    assert "Traceback" not in err


def test_esptool_writes_the_esp_app_image_of_the_esp32c3_board(tmp_path):
    """On esp32c3-devkitm the first runner is esptool, and it writes the app image the board's
    esp_app_image step made (not the raw .bin) at the app partition's address."""
    board = get_board("esp32c3-devkitm")
    first = board.runners[0]
    assert first.runner == "esptool"
    build = build_firmware("esp32c3-devkitm", [TINY_FC], tmp_path / "fw")
    runner = EsptoolRunner(board, args=first.args)
    command = runner.flash_command(FirmwareImage.from_build(build))
    app_image = Path(build.elf).with_suffix(".app-image.bin")
    assert app_image.is_file()
    assert command[:3] == [runner.program_name, "--chip", "esp32c3"]
    assert "0x10000" in command and Path(command[-1]).resolve() == app_image.resolve()
