"""Flash runners: the command line each builds from the built-in boards' `flash:` args, and real
runs of the installed tools (openocd, st-flash; pyOCD, J-Link, avrdude, PlatformIO when present)
on a machine with no board attached, whose failures must be explained plainly."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from microbuild.api import build_firmware, get_board, list_boards
from microbuild.device.runners import (
    RUNNERS,
    AvrdudeRunner,
    FirmwareImage,
    FlashError,
    FlashToolRunner,
    JlinkRunner,
    OpenocdRunner,
    PlatformioRunner,
    PyocdRunner,
    StlinkRunner,
    runner_for,
)
from microbuild.errors import DeviceError, MicrobuildError

REPO = Path(__file__).resolve().parents[2]
TINY_FC = REPO / "tests" / "models" / "tiny_fc.tflite"
FLASH_RUNNERS = {"openocd": OpenocdRunner, "pyocd": PyocdRunner, "stlink": StlinkRunner,
                 "jlink": JlinkRunner, "avrdude": AvrdudeRunner, "platformio": PlatformioRunner}


@pytest.fixture(scope="module")
def stm32_build(tmp_path_factory):
    """A real stm32f746 firmware (ELF, .bin, .hex), built once for this module."""
    return build_firmware("stm32f746", [TINY_FC], tmp_path_factory.mktemp("stm32f746-fw"))


@pytest.fixture(scope="module")
def stm32_image(stm32_build):
    return FirmwareImage.from_build(stm32_build)


@pytest.fixture
def paper_image(tmp_path):
    """Firmware paths for command lines (nothing is run, so the files need not exist)."""
    out = tmp_path / "fw"
    return FirmwareImage(out / "firmware.elf", out / "firmware.bin", out / "firmware.hex")


def _flash_error(runner: FlashToolRunner, image: FirmwareImage, timeout: float = 60.0) -> str:
    with pytest.raises(FlashError) as info:
        runner.flash(image, timeout=timeout)
    assert isinstance(info.value, MicrobuildError)  # the CLI prints it without a traceback
    return str(info.value)


# --- registry -------------------------------------------------------------------------------------

def test_registry_keeps_the_emulators_and_adds_every_flash_runner():
    assert {"qemu", "host", "simavr"} <= set(RUNNERS)
    for name, cls in FLASH_RUNNERS.items():
        assert RUNNERS[name] is cls and cls.name == name
        assert issubclass(cls, FlashToolRunner) and cls.program and cls.install_hint


def test_every_runner_a_builtin_board_lists_is_registered_and_builds_a_command(paper_image,
                                                                               tmp_path):
    project = tmp_path / "pio"
    project.mkdir()
    (project / "platformio.ini").write_text("[env:only]\nplatform = x\n")
    for board in list_boards():
        for entry in board.runners:
            assert entry.runner in RUNNERS, f"{board.name}: {entry.runner} is not registered"
            runner = runner_for(board, entry.runner)
            if isinstance(runner, PlatformioRunner):
                runner.project_dir = project
            if isinstance(runner, FlashToolRunner):
                command = runner.flash_command(paper_image)
                assert command[0] == runner.program
                assert runner.probe_description()


def test_runner_for_passes_options_to_a_flash_runner(tmp_path):
    board = get_board("atmega328p")
    runner = runner_for(board, "avrdude", args={"port": "/dev/ttyUSB7"})
    assert isinstance(runner, AvrdudeRunner)
    assert runner.args == {"programmer": "arduino", "part": "m328p", "baud": 115200,
                           "port": "/dev/ttyUSB7"}
    pio = runner_for(board, "platformio", project_dir=tmp_path)
    assert isinstance(pio, PlatformioRunner) and pio.project_dir == tmp_path


def test_a_flash_runner_does_not_pretend_to_run_a_firmware(paper_image):
    with pytest.raises(DeviceError, match="programs a real board"):
        OpenocdRunner(get_board("stm32f746")).run_to_exit(paper_image.elf)


def test_firmware_image_from_build_and_from_path(stm32_build, stm32_image):
    assert stm32_image == FirmwareImage(stm32_build.elf, stm32_build.binary, stm32_build.hex)
    assert FirmwareImage.from_path(stm32_build.elf) == stm32_image
    assert FirmwareImage.from_path(stm32_build.hex).elf == stm32_build.elf
    lonely = FirmwareImage.from_path(Path("/nonexistent/app.elf"))
    assert lonely == FirmwareImage(Path("/nonexistent/app.elf"), None, None)


# --- command lines from the built-in boards' args ----------------------------------------------

def _expected(board: str, runner: str, image: FirmwareImage) -> list[str]:
    elf, binary, hex_ = (str(p.resolve()) for p in (image.elf, image.binary, image.hex))
    program = f"program {elf} verify reset exit"
    jlink = ["JLinkExe", "-NoGui", "1", "-ExitOnError", "1", "-CommandFile",
             str(image.elf.resolve().with_suffix(".jlink"))]
    return {
        ("stm32f746", "stlink"): ["st-flash", "--reset", "write", binary, "0x08000000"],
        ("stm32f746", "openocd"): ["openocd", "-f", "board/stm32f7discovery.cfg", "-c", program],
        ("stm32f746", "pyocd"): ["pyocd", "flash", "-t", "stm32f746xg", elf],
        ("nucleo-f746zg", "stlink"): ["st-flash", "--reset", "write", binary, "0x08000000"],
        ("nucleo-f746zg", "openocd"): ["openocd", "-f", "board/st_nucleo_f7.cfg", "-c", program],
        ("nucleo-f746zg", "pyocd"): ["pyocd", "flash", "-t", "stm32f746zg", elf],
        ("nrf52840dk", "jlink"): jlink,
        ("nrf52840dk", "pyocd"): ["pyocd", "flash", "-t", "nrf52840", elf],
        # OpenOCD picks JTAG for a J-Link unless told; target/nrf52.cfg then fails.
        ("nrf52840dk", "openocd"): ["openocd", "-f", "interface/jlink.cfg",
                                    "-c", "transport select swd", "-f", "target/nrf52.cfg",
                                    "-c", program],
        ("rp2040-pico", "openocd"): ["openocd", "-f", "interface/cmsis-dap.cfg",
                                     "-f", "target/rp2040.cfg", "-c", "adapter speed 5000",
                                     "-c", program],
        ("rp2040-pico", "pyocd"): ["pyocd", "flash", "-t", "rp2040", elf],
        ("sparkfun-edge", "jlink"): jlink,
        ("sparkfun-edge", "pyocd"): ["pyocd", "flash", "-t", "ama3b1kk_kbr", elf],
        ("atmega328p", "avrdude"): ["avrdude", "-p", "m328p", "-c", "arduino",
                                    "-P", "/dev/ttyUSB3", "-b", "115200",
                                    "-U", f"flash:w:{hex_}:i"],
    }[board, runner]


@pytest.mark.parametrize("board,runner", [
    ("stm32f746", "stlink"), ("stm32f746", "openocd"), ("stm32f746", "pyocd"),
    ("nucleo-f746zg", "stlink"), ("nucleo-f746zg", "openocd"), ("nucleo-f746zg", "pyocd"),
    ("nrf52840dk", "jlink"), ("nrf52840dk", "pyocd"), ("nrf52840dk", "openocd"),
    ("rp2040-pico", "openocd"), ("rp2040-pico", "pyocd"),
    ("sparkfun-edge", "jlink"), ("sparkfun-edge", "pyocd"),
    ("atmega328p", "avrdude"),
])
def test_command_line_from_the_board_args(board, runner, paper_image):
    # The Uno's port is not in its YAML (it depends on the machine): the CLI passes it.
    args = {"port": "/dev/ttyUSB3"} if runner == "avrdude" else None
    built = runner_for(get_board(board), runner, **({"args": args} if args else {}))
    assert built.flash_command(paper_image) == _expected(board, runner, paper_image)


@pytest.mark.parametrize("board", ["stm32f746", "nucleo-f746zg", "nrf52840dk", "rp2040-pico",
                                   "atmega328p"])
def test_platformio_command_line(board, tmp_path):
    project = tmp_path / "pio"
    project.mkdir()
    pio_board = get_board(board).platformio["board"]
    (project / "platformio.ini").write_text(f"[platformio]\n\n[env:{pio_board}]\n"
                                            f"board = {pio_board}\n")
    runner = PlatformioRunner(get_board(board), project_dir=project)
    assert runner.flash_command(FirmwareImage(tmp_path / "unused.elf")) == [
        "pio", "run", "-d", str(project.resolve()), "-e", pio_board, "-t", "upload"]


def test_platformio_env_and_port_from_args(tmp_path):
    project = tmp_path / "pio"
    project.mkdir()
    (project / "platformio.ini").write_text("[env:a]\n[env:b]\n")
    board = get_board("atmega328p")
    # Several environments and no `env`: the board's name.
    assert PlatformioRunner(board, project_dir=project).env() == "atmega328p"
    runner = PlatformioRunner(board, args={"project_dir": str(project), "env": "b",
                                           "upload_port": "/dev/ttyACM1"})
    assert runner.flash_command(FirmwareImage(tmp_path / "x.elf")) == [
        "pio", "run", "-d", str(project.resolve()), "-e", "b", "-t", "upload",
        "--upload-port", "/dev/ttyACM1"]


def test_avrdude_defaults(paper_image):
    runner = AvrdudeRunner(get_board("atmega328p"))
    from serial.tools import list_ports

    if not [p for p in list_ports.comports() if p.vid is not None]:
        assert runner.port() == "/dev/ttyACM0"
    # A USB programmer takes no serial port or baud rate.
    usbasp = AvrdudeRunner(get_board("atmega328p"), args={"programmer": "usbasp"})
    assert usbasp.flash_command(paper_image) == [
        "avrdude", "-p", "m328p", "-c", "usbasp",
        "-U", f"flash:w:{paper_image.hex.resolve()}:i"]


def test_stlink_writes_the_hex_when_there_is_no_binary_and_defaults_the_address(tmp_path):
    board = get_board("stm32f746")
    hex_only = FirmwareImage(tmp_path / "fw.elf", None, tmp_path / "fw.hex")
    assert StlinkRunner(board).flash_command(hex_only) == [
        "st-flash", "--reset", "--format", "ihex", "write", str((tmp_path / "fw.hex").resolve())]
    no_address = StlinkRunner(board, args={"address": None, "serial": "0669FF3", "freq_khz": 1800})
    assert no_address.flash_command(FirmwareImage(tmp_path / "fw.elf", tmp_path / "fw.bin")) == [
        "st-flash", "--reset", "--serial", "0669FF3", "--freq=1800", "write",
        str((tmp_path / "fw.bin").resolve()), "0x08000000"]


def test_jlink_command_file(paper_image):
    runner = JlinkRunner(get_board("nrf52840dk"))
    assert runner.script(paper_image) == (
        "device nRF52840_xxAA\nsi SWD\nspeed 4000\nconnect\nr\nh\n"
        f"loadfile {paper_image.hex.resolve()}\nr\ng\nexit\n")
    paper_image.elf.parent.mkdir(parents=True)
    runner.prepare(paper_image)
    assert runner.command_file(paper_image).read_text() == runner.script(paper_image)
    # Without a .hex: the .bin at the start of the board's flash.
    edge = JlinkRunner(get_board("sparkfun-edge"), args={"speed": 1000, "interface": "JTAG"})
    bin_only = FirmwareImage(paper_image.elf, paper_image.binary, None)
    script = edge.script(bin_only).splitlines()
    assert script[:3] == ["device AMA3B1KK-KBR", "si JTAG", "speed 1000"]
    origin = get_board("sparkfun-edge").region_for("text").origin
    assert f"loadfile {paper_image.binary.resolve()} {origin:#x}" in script


def test_probe_descriptions():
    assert StlinkRunner(get_board("stm32f746")).probe_description() == \
        "an ST-LINK (USB 0483:374b)"
    assert OpenocdRunner(get_board("stm32f746")).probe_description() == \
        "an ST-LINK (USB 0483:374b), as board/stm32f7discovery.cfg selects"
    assert OpenocdRunner(get_board("rp2040-pico")).probe_description() == \
        "a CMSIS-DAP probe (USB 2e8a:000c), as interface/cmsis-dap.cfg selects"
    assert JlinkRunner(get_board("nrf52840dk")).probe_description() == \
        "a SEGGER J-Link (USB 1366:1015)"
    # The Edge's USB is a CH340 serial chip, not a probe.
    assert "SWD header" in PyocdRunner(get_board("sparkfun-edge")).probe_description()


def test_missing_args_say_what_to_add(paper_image):
    with pytest.raises(FlashError, match=r"no `config`.*board YAML"):
        OpenocdRunner(get_board("stm32f746"), args={"config": []}).flash_command(paper_image)
    with pytest.raises(FlashError, match=r"no `target`"):
        PyocdRunner(get_board("stm32f746"), args={"target": None}).flash_command(paper_image)
    with pytest.raises(FlashError, match=r"no `device`"):
        JlinkRunner(get_board("nrf52840dk"), args={"device": ""}).flash_command(paper_image)


# --- real runs without a board ------------------------------------------------------------------

def _assert_names_everything(message: str, runner: FlashToolRunner, probe: str, tool_line: str,
                             exit_code: int) -> None:
    assert f"runner {runner.name}" in message
    assert f"board '{runner.board.name}'" in message
    assert f"looked for: {probe}" in message
    assert "no probe found" in message
    assert tool_line in message  # the tool's own output
    assert f"exit code:  {exit_code}" in message
    assert "What to do: connect the board's debug USB port" in message


def test_openocd_without_a_board(stm32_image):
    assert shutil.which("openocd"), "openocd is not installed: ./setup.sh installs it"
    runner = runner_for(get_board("stm32f746"), "openocd")
    message = _flash_error(runner, stm32_image)
    _assert_names_everything(message, runner,
                             "an ST-LINK (USB 0483:374b), as board/stm32f7discovery.cfg selects",
                             "| Error: open failed", 1)
    assert (f"command:    {shutil.which('openocd')} -f board/stm32f7discovery.cfg -c "
            f"'program {stm32_image.elf.resolve()} verify reset exit'") in message
    assert "Open On-Chip Debugger" in message


def test_stlink_without_a_board(stm32_image):
    assert shutil.which("st-flash"), "st-flash is not installed: ./setup.sh installs stlink-tools"
    runner = runner_for(get_board("stm32f746"), "stlink")
    message = _flash_error(runner, stm32_image)
    _assert_names_everything(message, runner, "an ST-LINK (USB 0483:374b)",
                             "Couldn't find any ST-Link devices", 255)
    assert (f"command:    {shutil.which('st-flash')} --reset write "
            f"{stm32_image.binary.resolve()} 0x08000000") in message


@pytest.mark.parametrize("board,probe,tool_line", [
    ("nrf52840dk", "a SEGGER J-Link (USB 1366:1015), as interface/jlink.cfg selects",
     "Error: No J-Link device found"),
    ("rp2040-pico", "a CMSIS-DAP probe (USB 2e8a:000c), as interface/cmsis-dap.cfg selects",
     "Error: unable to find a matching CMSIS-DAP device"),
])
def test_openocd_other_probes_without_a_board(board, probe, tool_line, stm32_image):
    # OpenOCD gives up looking for the probe before it reads the ELF, so any ELF will do.
    runner = OpenocdRunner(get_board(board))
    _assert_names_everything(_flash_error(runner, stm32_image), runner, probe, tool_line, 1)


def test_openocd_unknown_script(stm32_image):
    runner = OpenocdRunner(get_board("stm32f746"), args={"config": ["board/no-such-board.cfg"]})
    message = _flash_error(runner, stm32_image)
    assert "OpenOCD has no script board/no-such-board.cfg" in message
    assert "Can't find board/no-such-board.cfg" in message  # openocd's own words
    assert "exit code:  1" in message and "`config` list" in message


def test_pyocd(stm32_image):
    runner = runner_for(get_board("stm32f746"), "pyocd")
    installed = bool(shutil.which("pyocd") or importlib.util.find_spec("pyocd"))
    message = _flash_error(runner, stm32_image)
    if installed:
        _assert_names_everything(message, runner, "an ST-LINK (USB 0483:374b)", "", 1)
    else:
        assert "flashing board 'stm32f746' with runner pyocd failed: its tool pyocd is not " \
               "installed" in message
        assert "pip install pyocd" in message
        assert "looked for: an ST-LINK (USB 0483:374b)" in message
        assert f"pyocd flash -t stm32f746xg {stm32_image.elf.resolve()} (not run)" in message


def test_jlink_is_not_installed(stm32_image, tmp_path, monkeypatch):
    # J-Link cannot be installed from Debian or PyPI; an empty PATH makes sure of it here.
    monkeypatch.setenv("PATH", str(tmp_path))
    runner = runner_for(get_board("nrf52840dk"), "jlink")
    message = _flash_error(runner, stm32_image)
    assert message.startswith("flashing board 'nrf52840dk' with runner jlink failed: its tool "
                              "JLinkExe is not installed: `JLinkExe` is not on PATH.")
    assert "looked for: a SEGGER J-Link (USB 1366:1015)" in message
    assert "https://www.segger.com/downloads/jlink/" in message
    assert "Or use another runner this board lists: pyocd, openocd, platformio" in message
    assert not runner.command_file(stm32_image).exists()  # nothing written for a tool not there


def test_avrdude(tmp_path):
    hex_file = tmp_path / "firmware.hex"
    hex_file.write_text(":00000001FF\n")
    image = FirmwareImage(tmp_path / "firmware.elf", None, hex_file)
    runner = AvrdudeRunner(get_board("atmega328p"), args={"port": str(tmp_path / "ttyNONE")})
    message = _flash_error(runner, image)
    if shutil.which("avrdude"):
        assert f"no probe found: {tmp_path / 'ttyNONE'} is not the serial port" in message
        assert "exit code:  1" in message
    else:
        assert "its tool avrdude is not installed" in message
        assert "sudo apt-get install avrdude" in message


def test_platformio_without_a_project_says_how_to_make_one(stm32_image, tmp_path):
    runner = runner_for(get_board("stm32f746"), "platformio")
    message = _flash_error(runner, stm32_image)
    assert "runner platformio flashes a PlatformIO project, and none was given" in message
    assert "microbuild generate --format platformio" in message
    empty = tmp_path / "not-a-project"
    empty.mkdir()
    message = _flash_error(PlatformioRunner(get_board("stm32f746"), project_dir=empty),
                           stm32_image)
    assert f"file not found: the PlatformIO project {empty} has no platformio.ini" in message


def test_platformio_not_installed(stm32_image, tmp_path, monkeypatch):
    project = tmp_path / "pio"
    project.mkdir()
    (project / "platformio.ini").write_text("[env:disco_f746ng]\n")
    runner = PlatformioRunner(get_board("stm32f746"), project_dir=project)
    if importlib.util.find_spec("platformio") or shutil.which("pio"):
        assert runner.executable()  # found: uploading needs a board, so stop here
        return
    monkeypatch.setenv("PATH", str(tmp_path))
    message = _flash_error(runner, stm32_image)
    assert "its tool pio is not installed" in message and "pip install platformio" in message


@pytest.mark.parametrize("runner_cls,board", [(OpenocdRunner, "stm32f746"),
                                              (StlinkRunner, "stm32f746")])
def test_file_not_found(runner_cls, board, tmp_path):
    missing = tmp_path / "never-built" / "firmware.elf"
    image = FirmwareImage.from_path(missing)
    runner = runner_cls(get_board(board))
    message = _flash_error(runner, image)
    wanted = runner.image_file(image)
    assert f"failed: file not found: the firmware file {wanted} does not exist" in message
    assert f"runner {runner.name}" in message and "looked for: an ST-LINK" in message
    assert "command:" not in message  # the tool was not started
    assert "microbuild build --board stm32f746" in message


def test_program_that_is_not_executable(stm32_image, tmp_path):
    tool = tmp_path / "openocd"
    tool.write_text("not a program\n")
    tool.chmod(0o644)
    runner = OpenocdRunner(get_board("stm32f746"), args={"program": str(tool)})
    message = _flash_error(runner, stm32_image)
    assert f"its tool {tool} cannot be started: {tool} is not an executable file" in message
    assert f"chmod +x {tool}" in message and "fix the runner's `program` arg" in message
    # Executable, but its interpreter does not exist: the kernel refuses to start it.
    tool.write_text("#!/nonexistent/interpreter\n")
    tool.chmod(0o755)
    message = _flash_error(runner, stm32_image)
    assert f"its tool {tool} cannot be started: starting {tool} failed" in message
    assert "sudo apt-get install openocd" in message


class _SlowOpenocd(OpenocdRunner):
    """openocd told to wait 20 s before it does anything: a stuck tool (which also ignores
    SIGTERM while it sleeps, so it takes the SIGKILL)."""

    kill_grace = 0.5

    def flash_command(self, image):
        return [self.program_name, "-c", "sleep 20000"]


def test_a_tool_that_does_not_finish_is_killed(stm32_image):
    runner = _SlowOpenocd(get_board("stm32f746"))
    # The call returning at all (the tool sleeps for hours) and the message prove the kill; no
    # assertion on how long it took on this host.
    message = _flash_error(runner, stm32_image, timeout=1.0)
    assert "openocd did not finish within 1 s and was stopped (killed)" in message
    assert "exit code:  none: stopped" in message
    assert "-c 'sleep 20000'" in message


# --- recognising failures by the tools' wording -------------------------------------------------

@pytest.mark.parametrize("runner_cls,board,output,kind", [
    (OpenocdRunner, "stm32f746",
     "Error: libusb_open() failed with LIBUSB_ERROR_ACCESS\nError: open failed\n",
     "usb-permission"),
    (OpenocdRunner, "stm32f746",
     "Info : STLINK V2J37M26 (API v2) VID:PID 0483:374B\nError: init mode failed (unable to "
     "connect to the target)\n", "target"),
    (OpenocdRunner, "stm32f746", "Error: couldn't open /tmp/x.elf\n", "file-not-found"),
    (OpenocdRunner, "stm32f746", "Error: checksum mismatch - attempting binary compare\n"
     "diff 0 address 0x08000000. Was 0xff instead of 0x00\nverify failed\n", "verify"),
    (StlinkRunner, "stm32f746", "WARN usb.c: Couldn't find any ST-Link devices\n", "no-probe"),
    (StlinkRunner, "stm32f746", "WARN common.c: unknown chip id! 0xe0042000\n", "target"),
    (StlinkRunner, "stm32f746", "ERROR common.c: open(/tmp/x.bin) == -1\n", "file-not-found"),
    (PyocdRunner, "stm32f746", "0000123 C No connected debug probes [__main__]\n", "no-probe"),
    (PyocdRunner, "sparkfun-edge", "0000180 C Target type 'ama3b1kk_kbr' not recognized. Use "
     "'pyocd list --targets' to see currently available target types.\n", "unknown-target"),
    (JlinkRunner, "nrf52840dk", "Connecting to J-Link via USB...FAILED\n", "no-probe"),
    (JlinkRunner, "nrf52840dk", "Cannot connect to target.\n", "target"),
    (AvrdudeRunner, "atmega328p", "avrdude OS error: cannot open port /dev/ttyACM0: No such file "
     "or directory\navrdude error: unable to open programmer arduino on port /dev/ttyACM0\n",
     "no-probe"),
    (AvrdudeRunner, "atmega328p", "avrdude OS error: cannot open port /dev/ttyACM0: Permission "
     "denied\n", "usb-permission"),
    (AvrdudeRunner, "atmega328p", "avrdude: stk500_recv(): programmer is not responding\n",
     "target"),
    (PlatformioRunner, "stm32f746", "Error: Unknown environment names 'disco'. Valid names are "
     "'nucleo'\n", "unknown-env"),
    (PlatformioRunner, "stm32f746", "xPack Open On-Chip Debugger 0.12.0\nError: open failed\n",
     "no-probe"),
])
def test_diagnosis(runner_cls, board, output, kind, tmp_path):
    runner = runner_cls(get_board(board))
    diagnosis = runner.diagnose(output, FirmwareImage(tmp_path / "fw.elf", tmp_path / "fw.bin",
                                                      tmp_path / "fw.hex"))
    assert diagnosis.kind == kind
    assert diagnosis.headline and diagnosis.advice


def test_usb_permission_advice_names_udev_rules(tmp_path):
    runner = StlinkRunner(get_board("stm32f746"))
    diagnosis = runner.diagnose("libusb_open() failed: LIBUSB_ERROR_ACCESS",
                                FirmwareImage(tmp_path / "fw.elf", tmp_path / "fw.bin"))
    assert diagnosis.headline.startswith("permission denied")
    assert "udev rules" in diagnosis.advice and "49-stlinkv" in diagnosis.advice
    avr = AvrdudeRunner(get_board("atmega328p"))
    assert "dialout" in avr.diagnose("cannot open port /dev/ttyACM0: Permission denied",
                                     FirmwareImage(tmp_path / "fw.elf")).advice


def test_output_is_cut_to_its_last_lines():
    from microbuild.device.runners.flash_tool import _tail

    text = _tail("\n".join(f"line {i}" for i in range(100)))
    assert "line 99" in text and "line 60" in text and "line 59" not in text
    assert "left out" in text


def test_emulator_runners_ignore_flash_options():
    runner = runner_for(get_board("mps2-an385"), None, args={"port": "/dev/ttyACM0"})
    assert runner.name == "qemu"
