"""`microbuild update` through the runners that program Intel HEX (nrfjprog, nrfutil) or a DfuSe
address (dfu-util), as tests/blob/test_update.py checks the others: each one's write command
line, and one write run end to end through a stand-in nrfjprog that keeps the .hex it was given,
whose records must put the blob's bytes at the slot address and nowhere else."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from microbuild import cli
from microbuild.blob import Blob, write_blob
from microbuild.boards import resolve_board
from microbuild.boards.loader import ENV_PATH
from microbuild.device.runners.dfu_util import DfuUtilRunner
from microbuild.device.runners.flash_tool import FlashError
from microbuild.device.runners.nrf import NrfjprogRunner, NrfutilRunner, intel_hex

# nrf52840dk with one model slot in the last 256 KiB of its 1 MiB flash (0xC0000).
BOARDS = {
    "nrf-slots": """name: nrf-slots
extends: nrf52840dk
memory:
  placement:
    model_slots: [{region: flash, offset: 768K, size: 256K}]
flash:
  - runner: nrfjprog
""",
}
NRF_SLOT = 0xC0000


@pytest.fixture(autouse=True)
def _boards(tmp_path, monkeypatch):
    for name, text in BOARDS.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    monkeypatch.setenv(ENV_PATH, str(tmp_path))


def _read_hex(text: str) -> dict[int, int]:
    """address -> byte of an Intel HEX file, checking every record's checksum."""
    memory, upper = {}, 0
    for line in text.splitlines():
        assert line.startswith(":")
        raw = bytes.fromhex(line[1:])
        assert sum(raw) & 0xFF == 0, f"bad checksum: {line}"
        count, offset, kind, payload = raw[0], int.from_bytes(raw[1:3], "big"), raw[3], raw[4:-1]
        assert len(payload) == count
        if kind == 4:
            upper = int.from_bytes(payload, "big") << 16
        elif kind == 0:
            for k, value in enumerate(payload):
                memory[upper + offset + k] = value
        elif kind == 1:
            return memory
    raise AssertionError("no end-of-file record")


def test_intel_hex_places_the_bytes_across_64k_boundaries():
    data = bytes(range(256)) * 3  # 768 bytes from 0x1FFF00: crosses 0x200000
    memory = _read_hex(intel_hex(data, 0x1FFF00))
    assert memory == {0x1FFF00 + k: v for k, v in enumerate(data)}
    assert intel_hex(b"", 0x1000) == ":00000001FF\n"


def test_nordic_and_dfu_runners_write_at_the_slot_address(tmp_path):
    data = tmp_path / "m.mbm"
    data.write_bytes(bytes(range(40)))
    board = resolve_board("nrf-slots")
    hexfile = str((tmp_path / "m.hex").resolve())
    # The `erase: chiperase` a board may set for whole firmwares would wipe the firmware too:
    # a blob is always written erasing only the pages it covers.
    assert NrfjprogRunner(board, {"erase": "chiperase", "snr": 68}).write_command(
        data, NRF_SLOT) == ["nrfjprog", "-f", "NRF52", "--snr", "68", "--program", hexfile,
                            "--sectorerase", "--verify", "--reset"]
    assert _read_hex((tmp_path / "m.hex").read_text()) == {
        NRF_SLOT + k: k for k in range(40)}
    assert NrfutilRunner(board, {"erase": "ERASE_ALL"}).write_command(data, NRF_SLOT) == [
        "nrfutil", "device", "program", "--firmware", hexfile, "--options",
        "chip_erase_mode=ERASE_RANGES_TOUCHED_BY_FIRMWARE,verify=VERIFY_READ,reset=RESET_SYSTEM"]
    with pytest.raises(FlashError, match="0xc0004 is not 16-byte aligned"):
        NrfjprogRunner(board).write_command(data, NRF_SLOT + 4)
    stm = resolve_board("nucleo-f746zg")
    assert DfuUtilRunner(stm).write_command(data, 0x080C0000) == [
        "dfu-util", "-d", "0483:df11", "-a", "0", "-s", "0x080c0000:leave", "-D",
        str(data.resolve())]


def test_update_through_nrfjprog_writes_the_blob_at_the_slot(tmp_path, monkeypatch, capsys):
    # A stand-in nrfjprog that records its arguments and keeps the .hex it was given.
    fake = tmp_path / "nrfjprog"
    fake.write_text(f"#!{sys.executable}\nimport shutil, sys\n"
                    f"open({str(tmp_path / 'args')!r}, 'w').write(' '.join(sys.argv[1:]))\n"
                    f"shutil.copy(sys.argv[sys.argv.index('--program') + 1], "
                    f"{str(tmp_path / 'written.hex')!r})\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    blob = tmp_path / "m.mbm"
    blob.write_bytes(write_blob(Blob(
        kernel_set_id=0x1234, board="nrf-slots", workspace_bytes=16, pointer_bytes=4,
        inputs=[(0, 4)], outputs=[(4, 4)], ops=[], params=b"", weights=bytes(range(64)))))
    status = cli.main(["update", "--board", "nrf-slots", "--blob", str(blob), "--runner",
                       "nrfjprog"])
    assert status == 0, capsys.readouterr().err
    args = (tmp_path / "args").read_text().split()
    assert "--sectorerase" in args and "--program" in args
    data = blob.read_bytes()
    assert _read_hex((tmp_path / "written.hex").read_text()) == {
        NRF_SLOT + k: v for k, v in enumerate(data)}
