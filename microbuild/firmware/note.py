"""The firmware's identity card: an ELF note section, ``.note.microbuild``, that says which board
a firmware was built for, a build id, its models' C prefixes, its executor and toolchain.

`flash` reads it to refuse an ELF built for another board, and `monitor` / `run --firmware` to find
the models' summaries next to the ELF. The note is added after linking (objcopy --add-section),
so it is not an allocated section: it takes no flash or RAM, is in no load segment, and neither
the .bin/.hex images nor the fit report see it.

The build id is a hash of what the firmware loads into the board's memory (every allocated
section's address and bytes, before the note is added) and of the board's name: two builds with
the same id put the same bytes on the board.

Layout (the ELF note format, words in the ELF's byte order): namesz, descsz, type, the name
"microbuild\\0" padded to 4 bytes, then the description (JSON text, UTF-8) padded to 4 bytes.
"""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from microbuild.errors import BuildError, MicrobuildError

SECTION = ".note.microbuild"
NOTE_NAME = b"microbuild\0"
NOTE_TYPE = 1  # the JSON description, version 1


@dataclass
class FirmwareNote:
    """What a firmware says about itself."""

    board: str
    build_id: str  # 16 hex digits
    models: list[str]  # C prefixes, in firmware order
    executor: str
    toolchain: str
    # A table-executor firmware's kernel set and workspace (microbuild/firmware/table.py), which
    # `microbuild pack` packs models against; None for the other executors.
    table: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        fields = {"board": self.board, "build_id": self.build_id, "models": list(self.models),
                  "executor": self.executor, "toolchain": self.toolchain}
        if self.table is not None:
            fields["table"] = self.table
        return fields


def _pad4(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def image_id(elf: str | Path, board: str) -> str:
    """16 hex digits from the board's name and every allocated section's address and bytes."""
    from elftools.elf.constants import SH_FLAGS
    from elftools.elf.elffile import ELFFile

    digest = hashlib.sha256(board.encode() + b"\0")
    with open(elf, "rb") as f:
        for section in ELFFile(f).iter_sections():
            if not section["sh_flags"] & SH_FLAGS.SHF_ALLOC or section.name == SECTION:
                continue
            digest.update(struct.pack("<QQ", section["sh_addr"], section["sh_size"]))
            if section["sh_type"] != "SHT_NOBITS":
                digest.update(section.data())
    return digest.hexdigest()[:16]


def note_bytes(note: FirmwareNote, little_endian: bool = True) -> bytes:
    desc = json.dumps(note.to_dict(), sort_keys=True).encode()
    order = "<" if little_endian else ">"
    return (struct.pack(f"{order}III", len(NOTE_NAME), len(desc), NOTE_TYPE)
            + _pad4(NOTE_NAME) + _pad4(desc))


def _elf_little_endian(elf: Path) -> bool:
    with open(elf, "rb") as f:
        header = f.read(6)
    if header[:4] != b"\x7fELF":
        raise MicrobuildError(f"{elf} is not an ELF file")
    return header[5] == 1


def add_note(elf: str | Path, board: str, models: Sequence[str], executor: str, toolchain: str,
             objcopy: str, table: dict[str, Any] | None = None) -> FirmwareNote:
    """Write the note into ``elf`` (replacing one from an earlier link step, if any)."""
    elf = Path(elf)
    note = FirmwareNote(board, image_id(elf, board), list(models), executor, toolchain, table)
    with tempfile.TemporaryDirectory() as tmp:
        payload = Path(tmp) / "note.bin"
        payload.write_bytes(note_bytes(note, _elf_little_endian(elf)))
        command = [objcopy, "--remove-section", SECTION, "--add-section",
                   f"{SECTION}={payload}", str(elf)]
        result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"adding the firmware note to {elf} failed ({' '.join(command)}):\n"
                         f"{result.stderr.strip()}")
    return note


def read_note(elf: str | Path) -> FirmwareNote | None:
    """The note of ``elf``, or None when it has none (built by an older microbuild, or not by
    microbuild at all). A file that is not an ELF is a MicrobuildError naming it."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    path = Path(elf)
    try:
        with open(path, "rb") as f:
            elffile = ELFFile(f)
            section = elffile.get_section_by_name(SECTION)
            if section is None:
                return None
            data = section.data()
            order = "<" if elffile.little_endian else ">"
    except (ELFError, OSError) as err:
        raise MicrobuildError(f"{path}: cannot read it as an ELF file ({err})") from None
    namesz, descsz, kind = struct.unpack_from(f"{order}III", data)
    name_end = 12 + namesz
    desc_start = 12 + namesz + (-namesz % 4)
    if data[12:name_end] != NOTE_NAME or kind != NOTE_TYPE:
        raise MicrobuildError(f"{path}: its {SECTION} section is not one microbuild wrote")
    try:
        fields = json.loads(data[desc_start:desc_start + descsz].decode())
        return FirmwareNote(fields["board"], fields["build_id"], list(fields["models"]),
                            fields["executor"], fields["toolchain"], fields.get("table"))
    except (ValueError, KeyError) as err:
        raise MicrobuildError(f"{path}: its {SECTION} section cannot be read ({err})") from None
