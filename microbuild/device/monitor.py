"""Watching a board's console (`microbuild monitor`): lines as they come, and the output records a
standalone (AOT) firmware prints decoded into outputs, as `build --run` shows them.

The console is any Transport: a real board's serial port (or a TCP bridge), or the console of a
firmware this process started (QEMU, a host process).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from microbuild.boards import Board
from microbuild.device.aot_output import AotResult, parse_aot_output
from microbuild.device.errors import TransportClosedError
from microbuild.device.transports.base import Transport


class AotRecordDecoder:
    """Collects the lines of one ``mb-aot begin`` ... ``mb-aot end`` block (runtime/include/
    microbuild/aot.h) and decodes it when it is complete. A board that resets and prints a new
    block gives a new result each time."""

    def __init__(self, models: Sequence[dict[str, Any]], board: Board):
        self.models, self.board = list(models), board
        self._block: list[str] | None = None

    def feed(self, line: str) -> AotResult | None:
        words = line.split()
        if words[:2] == ["mb-aot", "begin"]:
            self._block = []
        if self._block is None:
            return None
        self._block.append(line)
        if words[:2] != ["mb-aot", "end"]:
            return None
        block, self._block = self._block, None
        status = int(words[2]) if len(words) > 2 and words[2].lstrip("-").isdigit() else 0
        return parse_aot_output("\n".join(block), self.models, self.board, status)


@dataclass
class MonitorEnd:
    """Why monitoring stopped."""

    reason: str  # "exited" (the firmware's process ended), "closed", "timeout", "rpc"
    detail: str = ""


# An RPC firmware's framing (docs/rpc-protocol.md): after boot it sends the no-op FF FE and then
# packets, each starting FF FD. Neither pair occurs in text (FF is not valid UTF-8).
RPC_FRAMING = (b"\xff\xfe", b"\xff\xfd")


def rpc_firmware_advice(board_name: str) -> str:
    """What to do about a console that speaks microbuild's RPC protocol instead of text."""
    return (f"this firmware is microbuild's RPC server (executor rpc, the one `microbuild run` "
            f"builds): it speaks a binary protocol to the host, not text, so monitor has nothing "
            f"to show. Drive it with `microbuild run --board {board_name} --model M.tflite` "
            f"(--no-flash if it is already on the board; --profile times each operator); to "
            f"watch a console, build a firmware that prints: `microbuild build --board "
            f"{board_name} --model M.tflite --executor aot` (the self-test) or your own main() "
            f"(`sources:`), then monitor")


def monitor(transport: Transport, on_line: Callable[[str], None],
            decoder: AotRecordDecoder | None = None,
            on_result: Callable[[AotResult], None] | None = None,
            timeout: float | None = None, board_name: str = "BOARD") -> MonitorEnd:
    """Print ``transport``'s console line by line until it closes (a firmware process exits, a
    serial port goes away) or ``timeout`` seconds pass (None: until interrupted). Stops at once
    (reason "rpc") when the console carries RPC framing instead of text."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pending = b""
    tail = b""  # the last byte read, so a framing pair split across two reads is still seen

    def emit(raw: bytes) -> None:
        line = raw.decode(errors="replace").rstrip("\r")
        on_line(line)
        if decoder is not None:
            result = decoder.feed(line)
            if result is not None and on_result is not None:
                on_result(result)

    try:
        while True:
            wait = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
            if wait <= 0:
                end = MonitorEnd("timeout")
                break
            data = transport.read(wait)
            if data and any(pair in tail + data for pair in RPC_FRAMING):
                end = MonitorEnd("rpc", rpc_firmware_advice(board_name))
                pending = pending.split(b"\xff")[0]  # text before the framing, not its bytes
                break
            tail = data[-1:] or tail
            pending += data
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                emit(raw)
    except TransportClosedError as closed:
        child = getattr(transport, "child", None)
        if child is not None:
            status = child.proc.wait(timeout=5)
            end = MonitorEnd("exited", f"the firmware exited with status {status}")
        else:
            end = MonitorEnd("closed", str(closed))
    if pending:
        emit(pending)
    return end
