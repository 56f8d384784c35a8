"""`microbuild monitor` on a firmware that speaks the RPC protocol (the one `microbuild run`
builds) says so at once, and what to do, instead of showing nothing for ever: from the build's
note when monitor starts the firmware itself, from the framing bytes on a real board's port."""

from __future__ import annotations

from pathlib import Path

import pytest

from microbuild import cli
from microbuild.device.errors import TransportClosedError
from microbuild.device.monitor import monitor

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "models" / "tiny_fc.tflite"


class ScriptedPort:
    """A console that delivers the given chunks, then stays silent (a board waiting for a host)."""

    def __init__(self, chunks: list[bytes]):
        self.chunks = list(chunks)

    def read(self, timeout: float) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""

    def close(self) -> None:
        pass


def test_framing_bytes_on_the_port_end_monitoring_with_advice():
    # An RPC server's boot traffic: the no-op FF FE (split across two reads), then a packet.
    port = ScriptedPort([b"bootloader v1\n", b"\xff", b"\xfe\xff\xfd\x00\x00\x00\x00"])
    lines = []
    end = monitor(port, lines.append, timeout=5.0, board_name="stm32f746")
    assert end.reason == "rpc"
    assert "RPC" in end.detail and "microbuild run --board stm32f746" in end.detail
    assert "--executor aot" in end.detail
    assert lines == ["bootloader v1"]  # the text before it was shown


def test_text_with_ff_bytes_alone_is_still_text():
    port = ScriptedPort([b"caf\xe9 \xff\n"])
    lines = []
    end = monitor(port, lines.append, timeout=0.5)
    assert end.reason == "timeout" and len(lines) == 1


def test_monitor_after_run_names_the_rpc_firmware_and_what_to_do(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", "--board", "host", "--model", str(TINY)]) == 0
    capsys.readouterr()
    # The last build is the RPC server `run` made: monitor refuses before starting it.
    assert cli.main(["monitor", "--board", "host", "--timeout", "20"]) == 1
    err = capsys.readouterr().err
    assert "RPC server (executor rpc" in err
    assert "microbuild run --board host" in err and "--executor aot" in err
    assert "started" not in err  # nothing was started to wait for a host that never comes


def test_transport_closing_still_ends_monitoring():
    class Gone(ScriptedPort):
        def read(self, timeout):
            raise TransportClosedError("port went away")

    assert monitor(Gone([]), lambda line: None, timeout=5.0).reason == "closed"


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
