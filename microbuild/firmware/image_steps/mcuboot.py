"""MCUboot: an image signed with `imgtool sign` (PyPI package imgtool, the MCUboot project's
tool), for boards whose flash starts with the MCUboot boot loader, which checks the signature and
starts the image in its slot.

MCUboot expects a header (``header_size`` bytes) before the firmware in the slot and jumps to the
vector table right after it, so the board's boot region must start at the slot's address plus
``header_size`` (the firmware is linked there); imgtool then prepends the header (--pad-header)
and appends the signature and hash (TLVs). Settings: ``key`` (PEM, relative to the board file;
`imgtool keygen -k key.pem -t ecdsa-p256` makes one), ``header_size``, ``slot_size``, and
optionally ``version`` (default 0.0.0) and ``align`` (the flash's write alignment, default 4).
"""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys
from pathlib import Path

from microbuild.errors import BoardError, BuildError
from microbuild.firmware.fit import region_images
from microbuild.firmware.image_steps.base import ImageStep, board_relative


def imgtool_command() -> list[str]:
    if importlib.util.find_spec("imgtool") is None:
        raise BuildError("the mcuboot step needs imgtool, which is not installed in this Python "
                         f"({sys.executable}): `pip install imgtool` (or "
                         "`pip install 'microbuild-mcu[mcuboot]'`)")
    return [sys.executable, "-m", "imgtool.main"]


class McubootImage(ImageStep):
    name = "mcuboot"

    def check(self) -> None:
        missing = [k for k in ("key", "header_size", "slot_size") if k not in self.settings]
        if missing:
            raise BoardError(f"{self.where()}: the mcuboot step needs {', '.join(missing)} "
                             "(the signing key's PEM file, MCUboot's image header size, e.g. "
                             "0x200, and the slot size in bytes)")

    def key(self) -> Path:
        return board_relative(self.board, str(self.settings["key"]))

    def outputs(self, name: str) -> list[str]:
        return [f"{name}.signed.bin"]

    def run(self, elf: Path, outputs: list[Path]) -> str:
        key = self.key()
        if not key.is_file():
            raise BuildError(f"{self.where('key')}: the signing key {key} does not exist; make "
                             f"one with `imgtool keygen -k {shlex.quote(str(key))} -t ecdsa-p256` (and keep it "
                             "out of version control)")
        images = region_images(elf, self.board)
        boot = self.board.boot_region
        if set(images) != {boot.name}:
            raise BuildError(f"{self.where()}: MCUboot signs one slot, but the image has bytes in "
                             f"regions {', '.join(sorted(images))}; place everything loaded in "
                             f"{boot.name}")
        start, data = images[boot.name]
        unsigned = outputs[0].with_name(outputs[0].name.replace(".signed.bin", ".unsigned.bin"))
        unsigned.write_bytes(data)
        s = self.settings
        command = imgtool_command() + [
            "sign", "--key", str(key), "--header-size", str(int(s["header_size"])),
            "--pad-header", "--align", str(int(s.get("align", 4))),
            "--version", str(s.get("version", "0.0.0")),
            "--slot-size", str(int(s["slot_size"])), str(unsigned), str(outputs[0])]
        result = subprocess.run(command, capture_output=True, text=True)
        unsigned.unlink(missing_ok=True)
        if result.returncode != 0 or not outputs[0].is_file():
            raise BuildError(f"imgtool sign failed (exit status {result.returncode}) for {elf}:"
                             f"\n  $ {' '.join(command)}\n"
                             + (result.stdout + result.stderr).strip())
        return (f"{outputs[0].name}: MCUboot image signed with {key.name}, for the slot at "
                f"{start - int(s['header_size']):#010x} ({int(s['slot_size']):,} bytes)")
