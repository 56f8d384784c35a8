"""UF2 by copying: a board whose boot ROM shows up as a USB drive (the RP2040's BOOTSEL mode
mounts as RPI-RP2; many nRF52 and SAMD boards' UF2 bootloaders do the same) takes a firmware by
copying its .uf2 onto that drive; the chip then writes it to flash and reboots.

No tool to install: the runner finds the mounted drive (a folder whose root holds INFO_UF2.TXT,
with the label or Board-ID the board expects), copies ``firmware.uf2`` there with ``cp`` and
flushes it with ``sync``.

Runner args:
  label    the drive's volume label (default RPI-RP2); also matched against INFO_UF2.TXT's
           Board-ID line
  drive    the mount point, when it is not found by itself (e.g. /media/me/RPI-RP2)
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from microbuild.device.runners.base import CompletedRun
from microbuild.device.runners.base import RunnerArg
from microbuild.device.runners.flash_tool import Diagnosis, FirmwareImage, FlashToolRunner

INFO_FILE = "INFO_UF2.TXT"
DEFAULT_LABEL = "RPI-RP2"


def mounted_folders() -> list[Path]:
    """Mount points of the file systems mounted on this machine (from /proc/mounts), plus the
    folders desktop automounters use, in case /proc is not readable."""
    folders: list[Path] = []
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 1:
                # /proc/mounts writes a space in a mount point as \040.
                folders.append(Path(fields[1].replace("\\040", " ")))
    except OSError:
        pass
    user = os.environ.get("USER", "")
    for parent in (Path("/media") / user, Path("/run/media") / user, Path("/media")):
        if user or parent == Path("/media"):
            try:
                folders += [p for p in parent.iterdir() if p.is_dir()]
            except OSError:
                pass
    return folders


def _is_uf2_drive(folder: Path, label: str) -> bool:
    info = folder / INFO_FILE
    try:
        if not info.is_file():
            return False
        text = info.read_text(errors="replace")
    except OSError:
        return False
    return folder.name == label or f"Board-ID: {label}" in text or label in text


class Uf2Runner(FlashToolRunner):
    name = "uf2"
    arguments = (
        RunnerArg("label", (str,), "the drive's volume label or Board-ID"),
        RunnerArg("drive", (str,), "the mount point of the drive"),
    )
    program = "cp"
    install_hint = "cp is part of coreutils, which every Linux has: check PATH"
    failure_patterns = (
        (r"No space left on device", "full"),
        (r"Read-only file system", "read-only"),
    )

    @property
    def label(self) -> str:
        return str(self.args.get("label", DEFAULT_LABEL))

    def find_drive(self) -> Path | None:
        """The mounted UF2 drive of this board, or None."""
        if self.args.get("drive"):
            drive = Path(str(self.args["drive"])).expanduser()
            return drive if _is_uf2_drive(drive, drive.name) or (drive / INFO_FILE).is_file() \
                else None
        matches = [f for f in mounted_folders() if _is_uf2_drive(f, self.label)]
        return matches[0] if matches else None

    def image_file(self, image: FirmwareImage) -> Path:
        return Path(image.elf).with_suffix(".uf2")

    def _file_advice(self, path) -> str:
        return (f"build the firmware for a board whose post-link steps make a .uf2, or convert "
                f"the ELF yourself (`picotool uf2 convert "
                f"{shlex.join([str(Path(path).with_suffix('.elf')), str(path)])}`), or pass the right .elf with --firmware")

    def flash_command(self, image: FirmwareImage) -> list[str]:
        drive = self.find_drive()
        target = str(drive) if drive else f"/media/$USER/{self.label}"
        return [self.program_name, str(self.image_file(image).resolve()), f"{target}/"]

    def probe_description(self) -> str:
        if self.args.get("drive"):
            return f"the UF2 drive mounted at {self.args['drive']} (the runner's `drive` arg)"
        return (f"a mounted USB drive labelled {self.label} holding {INFO_FILE} (the board in "
                f"its UF2 bootloader)")

    def flash(self, image: FirmwareImage, timeout: float = 120.0) -> CompletedRun:
        self.check_image(image)
        if self.find_drive() is None:
            raise self._error(self._no_drive(), command=None, returncode=None, output=None)
        run = super().flash(image, timeout)
        os.sync()  # the chip reboots once the last block arrives: do not leave it in a cache
        return run

    def _no_drive(self) -> Diagnosis:
        if self.args.get("drive"):
            return Diagnosis("no-probe", f"{self.args['drive']} is not a mounted UF2 drive (it "
                             f"has no {INFO_FILE})",
                             "put the board in its bootloader so the drive appears, and check "
                             "the runner's `drive` arg against `lsblk -o NAME,LABEL,MOUNTPOINT`")
        return Diagnosis("no-probe", f"no UF2 drive labelled {self.label} is mounted",
                         "hold the board's BOOTSEL button while plugging it in (the RP2040 then "
                         f"shows up as a USB drive named {self.label}), and mount it if your "
                         "desktop does not (`lsblk -o NAME,LABEL,MOUNTPOINT` shows it; `udisksctl "
                         "mount -b /dev/sdX1`); or give its mount point in the runner's `drive` "
                         "arg")

    def describe(self, kind, image, match):
        if kind == "full":
            return Diagnosis(kind, "the UF2 drive is full: the image is bigger than the board's "
                             "flash", "check the fit report of the build")
        if kind == "read-only":
            return Diagnosis(kind, "the UF2 drive is mounted read-only",
                             "remount it writable, or unplug and replug the board in BOOTSEL "
                             "mode")
        return super().describe(kind, image, match)
