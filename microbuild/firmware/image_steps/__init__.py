"""Post-link image steps: what turns the linked firmware into what a chip's boot ROM or boot
loader takes, listed per board in the YAML's ``image:`` (run in order after the link).

One unit per step, each a :class:`ImageStep`:

    rp2040_boot2   our second-stage loader for the RP2040's QSPI flash, with the boot ROM's CRC,
                   linked into the first 256 bytes of flash (so .elf, .bin, .hex all carry it)
    uf2            a .uf2 of the loaded bytes, for a UF2 boot loader's USB drive
    esp_app_image  an ESP32 app image (esptool elf2image)
    mcuboot        an MCUboot image signed with imgtool

A step may also shape the link: reserve a boot header at the start of the boot region
(:func:`boot_header`), or say that its boot loader places every section at its run address
itself, so nothing is copied at reset (:func:`loader_places_sections`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from microbuild.boards import Board
from microbuild.errors import BoardError


class ImageStep:
    """One kind of post-link step. ``settings`` is the step's mapping from the board YAML."""

    name = ""
    # (section, bytes, what) the step fills at the start of the boot region, or None.
    header: tuple[str, int, str] | None = None
    # The boot loader loads every section at its run address (no copy at reset).
    loader_places_sections = False
    # The runtime/ source assembled for the board whose code becomes the header, or None.
    header_source: str | None = None

    def header_c(self, code: bytes) -> str:
        """The C file holding the header, made from the assembled ``header_source``'s code."""
        raise NotImplementedError

    def __init__(self, board: Board, settings: dict[str, Any]):
        self.board = board
        self.settings = settings

    def where(self, key: str | None = None) -> str:
        index = next(i for i, s in enumerate(self.board.image_steps) if s == self.settings)
        path = f"image[{index}]" + (f".{key}" if key else "")
        return f"board '{self.board.name}' ({self.board.files[0]}): {path}"

    def check(self) -> None:
        """Raise BoardError when the board or the step's settings cannot work."""

    def outputs(self, name: str) -> list[str]:
        """The files (names, in the firmware's folder) the step writes for firmware ``name``."""
        return []

    def run(self, elf: Path, outputs: list[Path]) -> str:
        """Write ``outputs`` from the linked ``elf``; return a line for the build output."""
        raise NotImplementedError


def _registry() -> dict[str, type[ImageStep]]:
    from microbuild.firmware.image_steps.esp_app_image import EspAppImage
    from microbuild.firmware.image_steps.mcuboot import McubootImage
    from microbuild.firmware.image_steps.rp2040_boot2 import Rp2040Boot2
    from microbuild.firmware.image_steps.uf2 import Uf2Image

    return {cls.name: cls for cls in (Rp2040Boot2, Uf2Image, EspAppImage, McubootImage)}


def steps(board: Board) -> list[ImageStep]:
    """The board's image steps, checked."""
    registry = _registry()
    found = []
    for settings in board.image_steps:
        cls = registry.get(settings["step"])
        if cls is None:  # the schema's enum should have refused it
            raise BoardError(f"board '{board.name}': unknown image step '{settings['step']}'")
        step = cls(board, settings)
        step.check()
        found.append(step)
    return found


def boot_header(board: Board) -> tuple[str, int, str] | None:
    headers = [s.header for s in steps(board) if s.header is not None]
    if len(headers) > 1:
        raise BoardError(f"board '{board.name}': two image steps each put a header at the start "
                         "of the boot region; keep one")
    return headers[0] if headers else None


def loader_places_sections(board: Board) -> bool:
    return any(s.loader_places_sections for s in steps(board))


def board_relative(board: Board, path: str) -> Path:
    """A path from the board YAML, relative to the file that defines the board."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else Path(board.files[0]).parent / candidate
