"""`monitor`, `debug` and `run --no-flash` against QEMU: the emulated board itself, and a bench
board defined in YAML (boards/lab-an500.yaml: the AN500's memory map and UART, flashed with
OpenOCD, console over TCP) whose "already flashed" firmware the test runs in QEMU with the serial
port served on TCP."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from microbuild import cli
from microbuild.api import build_firmware, get_board
from microbuild.device.debug import free_port
from microbuild.device.runners import QemuRunner
from microbuild.tflm_reference import tflm_outputs
from microbuild.tensor_files import random_inputs

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DS_CNN = REPO / "tests" / "models" / "ds_cnn.tflite"
LAB_BOARD = HERE / "boards" / "lab-an500.yaml"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _table_values(printed: str) -> list[int]:
    """The values cell of the one int8 output row of the output table."""
    rows = [line for line in printed.splitlines() if "│ int8" in line]
    assert len(rows) == 1, printed
    return [int(v) for v in rows[0].split("│")[-2].split()]


# --- monitor ------------------------------------------------------------------------------------

def test_monitor_starts_the_qemu_board_and_decodes_the_output_table(project, capsys):
    assert cli.main(["build", "--board", "mps2-an500", "--model", str(DS_CNN)]) == 0
    capsys.readouterr()
    assert cli.main(["monitor", "--board", "mps2-an500", "--timeout", "120"]) == 0
    captured = capsys.readouterr()
    assert "mb-aot begin mps2-an500" in captured.out  # the raw lines, as they come
    assert "mb-aot end 0" in captured.out
    assert "model ds_cnn" in captured.out  # ... and the table build --run prints
    # DS-CNN's AOT run on the M7: 99,476 ticks at 25 MHz, exact under icount (its average
    # pool divides straight from the 16-bit sums since session 23; the depthwise dsp kernel's
    # outer loop as GCC compiles it since the temporal block's assembly, session 25: +0.07%; its
    # 1x1 convolutions widen each pixel straight from the input since session 26: -1.3%; the
    # depthwise band's row pointers rotate without a memmove call since session 27: -1.8%).
    assert "99,476 timer ticks per inference at 25,000,000 Hz = 3.98 M instructions (QEMU " \
           "icount" in captured.out
    assert "the firmware exited with status 0" in captured.err
    # The table's values are TFLM's on the input embedded in the firmware.
    from microbuild.firmware.last_build import find, firmware_at

    build = firmware_at(find("mps2-an500").elf, get_board("mps2-an500"))
    want = tflm_outputs(DS_CNN, build.inputs("ds_cnn"))[0].reshape(-1)
    assert _table_values(captured.out) == want.tolist()


def _listening(port: int) -> bool:
    hex_port = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        if any(line.split()[1].endswith(hex_port) and line.split()[3] == "0A" for line in lines):
            return True
    return False


class LabBoardInQemu:
    """The lab board "already flashed" with ``elf``: QEMU runs it, its UART a TCP server that
    waits for the first client before the core starts (nothing printed is lost)."""

    def __init__(self, elf: Path):
        self.port = free_port()
        runner = QemuRunner(get_board("mps2-an500"))
        command = runner.command(elf, serial=f"tcp:127.0.0.1:{self.port},server=on,wait=on")
        self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not _listening(self.port):
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            assert time.monotonic() < deadline, "QEMU did not open its serial port"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def test_monitor_a_real_board_on_its_port_decodes_the_last_build(project, capsys):
    assert cli.main(["build", "--board", str(LAB_BOARD), "--model", str(DS_CNN)]) == 0
    lab = LabBoardInQemu(project / "build" / "lab-an500" / "firmware.elf")
    try:
        capsys.readouterr()
        status = cli.main(["monitor", "--board", str(LAB_BOARD), "--port",
                           f"127.0.0.1:{lab.port}", "--timeout", "60"])
    finally:
        lab.stop()
    captured = capsys.readouterr()
    assert status == 0
    assert f"monitoring lab-an500 on tcp 127.0.0.1:{lab.port}" in captured.err
    assert "mb-aot end 0" in captured.out and "model ds_cnn" in captured.out
    assert "cycles" in captured.out  # a real board's ticks are cycles at its clock
    from microbuild.firmware.last_build import find, firmware_at

    build = firmware_at(find("lab-an500").elf, get_board(str(LAB_BOARD)))
    want = tflm_outputs(DS_CNN, build.inputs("ds_cnn"))[0].reshape(-1)
    assert _table_values(captured.out) == want.tolist()


# --- run --no-flash / --firmware ----------------------------------------------------------------

def test_run_no_flash_drives_the_firmware_already_on_the_board(project, capsys):
    assert cli.main(["build", "--board", str(LAB_BOARD), "--model", str(DS_CNN), "--executor",
                     "rpc"]) == 0
    lab = LabBoardInQemu(project / "build" / "lab-an500-rpc" / "firmware.elf")
    try:
        capsys.readouterr()
        # No --model: the board's last build describes what is on it. Flashing would fail here
        # (openocd finds no probe): --no-flash must not try.
        status = cli.main(["run", "--board", str(LAB_BOARD), "--no-flash", "--port",
                           f"127.0.0.1:{lab.port}", "--output", "y.npy"])
    finally:
        lab.stop()
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "connecting to firmware.elf on lab-an500 (not flashed)" in captured.err
    assert "openocd" not in captured.err
    from microbuild.compiler import compile_model

    x = random_inputs(compile_model(DS_CNN).inputs, 0)
    assert np.array_equal(np.load(project / "y.npy"),
                          tflm_outputs(DS_CNN, x)[0].reshape(np.load(project / "y.npy").shape))


def test_run_no_flash_on_a_board_running_another_build_says_so(project, capsys):
    other = build_firmware(LAB_BOARD, [DS_CNN], project / "other", executor="rpc", rpc_pool=2048)
    assert cli.main(["build", "--board", str(LAB_BOARD), "--model", str(DS_CNN), "--executor",
                     "rpc"]) == 0
    lab = LabBoardInQemu(other.elf)  # the board runs a different build than the last one
    try:
        capsys.readouterr()
        status = cli.main(["run", "--board", str(LAB_BOARD), "--no-flash", "--port",
                           f"127.0.0.1:{lab.port}"])
    finally:
        lab.stop()
    err = capsys.readouterr().err
    assert status == 1
    assert "runs firmware build" in err and "flash this firmware again" in err


def test_run_firmware_names_the_firmware(project, capsys):
    build = build_firmware("host", [DS_CNN], project / "mine", executor="rpc")
    assert cli.main(["run", "--board", "host", "--firmware", str(build.elf), "--output",
                     "y.npy"]) == 0
    from microbuild.compiler import compile_model

    x = random_inputs(compile_model(DS_CNN).inputs, 0)
    y = np.load(project / "y.npy")
    assert np.array_equal(y, tflm_outputs(DS_CNN, x)[0].reshape(y.shape))
    # Another board's firmware is refused before anything starts.
    assert cli.main(["run", "--board", "mps2-an500", "--firmware", str(build.elf)]) == 1
    assert "was built for board 'host', not 'mps2-an500'" in capsys.readouterr().err


# --- debug --------------------------------------------------------------------------------------

def test_gdb_attaches_to_the_qemu_gdb_server_and_reads_the_reset_pc(project):
    assert cli.main(["build", "--board", "mps2-an500", "--model", str(DS_CNN)]) == 0
    elf = project / "build" / "mps2-an500" / "firmware.elf"
    with open(elf, "rb") as f:
        symbol = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name("mb_reset_handler")
        reset = symbol[0]["st_value"] & ~1  # the Thumb bit is not part of the address
    debug = _start_debug(project)
    try:
        line = debug.stdout.readline()
        assert line.startswith("attach with: gdb-multiarch -q "), line + debug.stderr.read()
        command = line[len("attach with: "):].strip()
        assert f"-q {elf} -ex 'target remote localhost:" in command
        gdb = subprocess.run(command + " -batch -ex 'info registers pc'", shell=True,
                             capture_output=True, text=True, timeout=60)
        assert gdb.returncode == 0, gdb.stderr
        match = re.search(r"^pc\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+ <mb_reset_handler>", gdb.stdout,
                          re.MULTILINE)
        assert match, gdb.stdout
        assert int(match.group(1), 16) == reset
        # gdb -batch detaches at its end: the firmware runs on to its end, QEMU exits, and so
        # does `microbuild debug`, with the firmware's output on the way.
        debug.wait(timeout=60)
    finally:
        _stop_group(debug)
    assert debug.returncode == 0
    assert "mb-aot end 0" in debug.stdout.read()
    err = debug.stderr.read()
    assert "-gdb tcp:127.0.0.1:" in err and " -S" in err


def test_sigterm_stops_debug_and_its_gdb_server_cleanly(project):
    assert cli.main(["build", "--board", "mps2-an500", "--model", str(DS_CNN)]) == 0
    debug = _start_debug(project)
    try:
        # The line comes once the server runs; QEMU then waits, halted at reset, for a GDB that
        # never comes. As a script or IDE stops it: SIGTERM to `microbuild debug` alone.
        assert debug.stdout.readline().startswith("attach with: ")
        debug.send_signal(signal.SIGTERM)
        debug.wait(timeout=20)
        # QEMU went with it: nothing of the session's process group is left.
        with pytest.raises(ProcessLookupError):
            os.killpg(debug.pid, 0)
    finally:
        _stop_group(debug)
    assert debug.returncode == 0


def _start_debug(project: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "microbuild", "debug", "--board",
                             "mps2-an500"], cwd=project, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _stop_group(debug: subprocess.Popen) -> None:
    """Nothing of a session may be left running, whatever the test saw."""
    try:
        os.killpg(debug.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    debug.wait()


def test_debug_a_real_board_uses_its_runners_gdb_server(project):
    from microbuild.device.debug import debug_session

    board = get_board("stm32f746")
    elf = project / "firmware.elf"
    openocd = debug_session(board, elf, runner="openocd", port=4444)
    assert openocd.server == ["openocd", "-f", "board/stm32f7discovery.cfg", "-c",
                              "gdb_port 4444", "-c", "telnet_port disabled", "-c",
                              "tcl_port disabled", "-c", "init", "-c", "reset halt"]
    assert debug_session(board, elf, runner="pyocd", port=3333).server == [
        "pyocd", "gdbserver", "-t", "stm32f746xg", "-p", "3333"]
    assert debug_session(board, elf, runner="stlink", port=4242).server == [
        "st-util", "-p", "4242"]
    assert openocd.gdb_command("gdb-multiarch") == [
        "gdb-multiarch", "-q", str(elf.resolve()), "-ex", "target remote localhost:4444"]


def test_debug_with_openocd_and_no_probe_stops_with_openocds_error(project, capsys):
    # The real OpenOCD: its GDB server cannot start without a probe; debug reports its exit.
    build = build_firmware("stm32f746", [DS_CNN], project / "fw")
    status = cli.main(["debug", "--board", "stm32f746", "--runner", "openocd", "--firmware",
                       str(build.elf)])
    captured = capsys.readouterr()
    assert status == 1
    assert "attach with: gdb-multiarch" in captured.out
    assert "the GDB server exited with status" in captured.err
