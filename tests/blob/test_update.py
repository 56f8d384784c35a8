"""`microbuild update` on real boards: the blob is checked against the slot and the firmware
first, then written at the slot's address by the board's flash runner. No hardware here: each
runner's write command line is checked (as tests/flash checks their flash commands), and one
write runs through a stand-in st-flash that records its arguments."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from microbuild import cli
from microbuild.blob import Blob, write_blob
from microbuild.blob.format import BlobError
from microbuild.device.model_update import update
from microbuild.boards import resolve_board
from microbuild.boards.loader import ENV_PATH
from microbuild.device.runners import FlashError, runner_for
from microbuild.device.runners.picotool import PicotoolRunner
from microbuild.device.runners.probe_rs import ProbeRsRunner
from microbuild.device.runners.stm32cubeprogrammer import Stm32CubeProgrammerRunner
from microbuild.errors import MicrobuildError

# nucleo-f746zg with one model slot: the last 256 KiB of its 1 MiB flash (0x080c0000).
BOARD = """name: nucleo-slots
extends: nucleo-f746zg
memory:
  placement:
    model_slots: [{region: flash, offset: 768K, size: 256K}]
"""
SLOT = 0x080C0000


@pytest.fixture(autouse=True)
def _boards(tmp_path, monkeypatch):
    (tmp_path / "nucleo-slots.yaml").write_text(BOARD)
    monkeypatch.setenv(ENV_PATH, str(tmp_path))


def _blob(board: str = "nucleo-slots", weights: int = 64) -> bytes:
    return write_blob(Blob(kernel_set_id=0x1234, board=board, workspace_bytes=16, pointer_bytes=4,
                           inputs=[(0, 4)], outputs=[(4, 4)], ops=[], params=b"",
                           weights=bytes(weights)))


def test_each_runner_writes_the_binary_at_the_slot_address(tmp_path):
    data = tmp_path / "m.mbm"
    board = resolve_board("nucleo-slots")
    path = str(data.resolve())
    assert runner_for(board, "stlink").write_command(data, SLOT) == [
        "st-flash", "--reset", "write", path, "0x080c0000"]
    assert runner_for(board, "openocd").write_command(data, SLOT)[-2:] == [
        "-c", f"program {path} verify reset exit 0x80c0000"]
    assert runner_for(board, "pyocd").write_command(data, SLOT) == [
        "pyocd", "flash", "-t", "stm32f746zg", "--format", "bin", "--base-address", "0x80c0000",
        path]
    assert ProbeRsRunner(board, {"chip": "STM32F746ZGTx"}).write_command(data, SLOT) == [
        "probe-rs", "download", "--chip", "STM32F746ZGTx", "--verify", "--reset",
        "--binary-format", "bin", "--base-address", "0x80c0000", path]
    assert Stm32CubeProgrammerRunner(board).write_command(data, SLOT) == [
        "STM32_Programmer_CLI", "-c", "port=SWD", "-w", path, "0x080c0000", "-v"]
    assert PicotoolRunner(board).write_command(data, 0x10100000) == [
        "picotool", "load", path, "-t", "bin", "-o", "0x10100000"]
    esp = resolve_board("esp32c3-devkitm")
    assert runner_for(esp, "esptool").write_command(data, 0x200000)[-3:] == [
        "write-flash", "0x200000", path]
    nrf = resolve_board("nrf52840dk")
    command = runner_for(nrf, "jlink").write_command(data, 0xC0000)
    script = Path(command[-1]).read_text()
    assert "device nRF52840_xxAA" in script and f"loadfile {path} 0xc0000\n" in script
    # nrfjprog, nrfutil and dfu-util: tests/blob/test_update_runners.py. uf2 cannot (a drive).
    with pytest.raises(FlashError, match="runner uf2 cannot write a binary at an address"):
        from microbuild.device.runners.uf2 import Uf2Runner
        Uf2Runner(resolve_board("rp2040-pico")).write_command(data, 0x10100000)


def test_update_runs_the_board_runner_with_the_blob(tmp_path, monkeypatch, capsys):
    # A stand-in st-flash that records its arguments and the bytes it was given.
    fake = tmp_path / "st-flash"
    fake.write_text(f"#!{sys.executable}\nimport shutil, sys\n"
                    f"open({str(tmp_path / 'args')!r}, 'w').write(' '.join(sys.argv[1:]))\n"
                    f"shutil.copy(sys.argv[-2], {str(tmp_path / 'written')!r})\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    blob = tmp_path / "m.mbm"
    blob.write_bytes(_blob())
    status = cli.main(["update", "--board", "nucleo-slots", "--blob", str(blob)])
    assert status == 0, capsys.readouterr().err
    assert "model slot 0 at 0x080c0000" in capsys.readouterr().out
    args = (tmp_path / "args").read_text().split()
    assert args[0] == "--reset" and args[1] == "write" and args[-1] == "0x080c0000"
    assert (tmp_path / "written").read_bytes() == blob.read_bytes()


def test_update_refuses_before_writing_what_the_firmware_would_refuse(tmp_path):
    with pytest.raises(BlobError, match=r"holds 262,144 \(\d[\d,]* over\)"):
        update("nucleo-slots", _blob(weights=300 * 1024))
    with pytest.raises(BlobError, match="packed for board host, not nucleo-slots"):
        update("nucleo-slots", _blob(board="host"))
    broken = bytearray(_blob())
    broken[200] ^= 1
    with pytest.raises(BlobError, match="CRC-32 mismatch"):
        update("nucleo-slots", bytes(broken))
    with pytest.raises(MicrobuildError, match="has no model slots"):
        update("nucleo-f746zg", _blob())
