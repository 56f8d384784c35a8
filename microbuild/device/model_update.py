"""`microbuild update`: write a model blob into one of a board's model slots, without touching the
firmware (docs/model-blob.md, issue 31).

On a real board the blob goes through the board's flash runner, whose tool writes a raw binary at
an address (``FlashToolRunner.write_command``); on an emulated board QEMU boots the firmware with
the blob written into the slot by its loader device (QEMU's memory does not outlive the run, so
there an update is a boot with the new model).
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from microbuild.blob.format import BlobError, read_blob
from microbuild.boards import Board, resolve_board
from microbuild.errors import MicrobuildError
from microbuild.firmware.note import read_note


@dataclass
class Update:
    slot: int
    address: int
    bytes: int
    command: list[str]
    console: str  # what the tool (or, emulated, the firmware) printed
    status: int


def _slot(board: Board, slot: int | None) -> int:
    slots = board.model_slots
    if not slots:
        raise MicrobuildError(f"board {board.name} has no model slots (memory.placement."
                              "model_slots in its YAML): nothing to update")
    if slot is None:
        if len(slots) > 1:
            raise MicrobuildError(
                f"board {board.name} has {len(slots)} model slots: say which one to write "
                "(--slot 0 or --slot 1); write the one NOT holding the model that runs now, so "
                "that an interrupted write leaves that one to fall back to")
        return 0
    if not 0 <= slot < len(slots):
        raise MicrobuildError(f"board {board.name} has model slots 0 to {len(slots) - 1}, "
                              f"not {slot}")
    return slot


def check_for_slot(board: Board, blob: bytes, slot: int, firmware: Path | None) -> None:
    """Refuse, before writing anything, a blob the firmware would refuse or the slot cannot hold."""
    parsed = read_blob(blob)  # a BlobError listing what is wrong with it
    size = board.model_slots[slot].size
    if len(blob) > size:
        raise BlobError(f"the blob is {len(blob):,} bytes; model slot {slot} of {board.name} holds "
                        f"{size:,} ({len(blob) - size:,} over)")
    if parsed.board != board.name:
        raise BlobError(f"the blob was packed for board {parsed.board}, not {board.name}")
    note = read_note(firmware) if firmware is not None else None
    if note is not None and note.table and int(note.table["id"], 16) != parsed.kernel_set_id:
        raise BlobError(f"the blob was packed for kernel set {parsed.kernel_set_id:#010x}; "
                        f"{firmware} has {note.table['id']}: pack it with --firmware {firmware}")


def update(board: str | Path | Board, blob: bytes, slot: int | None = None,
           firmware: str | Path | None = None, runner: str | None = None,
           timeout: float = 120.0) -> Update:
    """Write ``blob`` into model slot ``slot`` of ``board`` (emulated boards: boot ``firmware``
    with it)."""
    from microbuild.device.runners import FlashToolRunner, runner_for
    from microbuild.device.runners.qemu import QemuRunner

    board = resolve_board(board)
    index = _slot(board, slot)
    firmware = Path(firmware) if firmware is not None else None
    check_for_slot(board, blob, index, firmware)
    address = board.model_slots[index].address
    with tempfile.TemporaryDirectory(prefix="mb-update-") as tmp:
        path = Path(tmp) / "model.mbm"
        path.write_bytes(blob)
        if board.is_emulated:
            if firmware is None:
                raise MicrobuildError(f"{board.name} is emulated: its slots exist while QEMU runs "
                                      "the firmware, so give the table firmware (--firmware "
                                      "F.elf) to boot with the blob")
            command = QemuRunner(board).command(firmware) + [
                "-device", f"loader,file={path},addr={address:#x},force-raw=on"]
            # subprocess.run kills QEMU if it outlives the timeout.
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
            return Update(index, address, len(blob), command, done.stdout + done.stderr,
                          done.returncode)
        tool = runner_for(board, runner)
        if not isinstance(tool, FlashToolRunner):
            raise MicrobuildError(f"runner {tool.name} cannot write into {board.name}'s flash")
        run = tool.write_at(path, address, timeout=timeout)
        return Update(index, address, len(blob), run.command, run.console, run.status)
