"""Post-link image steps: what turns the linked firmware into what a chip's boot ROM or boot
loader takes, listed per board in the YAML's ``image:`` (run in order after the link).

One unit per step, each an :class:`~microbuild.firmware.image_steps.base.ImageStep`:

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

from microbuild.boards import Board
from microbuild.errors import BoardError
from microbuild.firmware.image_steps.base import ImageStep
from microbuild.firmware.image_steps.esp_app_image import EspAppImage
from microbuild.firmware.image_steps.mcuboot import McubootImage
from microbuild.firmware.image_steps.rp2040_boot2 import Rp2040Boot2
from microbuild.firmware.image_steps.uf2 import Uf2Image


def _registry() -> dict[str, type[ImageStep]]:
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
