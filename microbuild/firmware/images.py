"""The raw images of a linked firmware, one per memory region that holds loaded bytes.

``objcopy -O binary`` writes one file from the lowest to the highest loaded address, filling the
gap: with weights in QSPI flash at 0x90000000 and code at 0x08000000 that is a 2.2 GB file, and an
ESP32-C3's DROM/IROM/DRAM windows make 96 MB. So when the loaded sections span several regions the
build writes one .bin per region instead, named after the region (``firmware.flash.bin``,
``firmware.qspi.bin``), and the .hex covers them all (Intel HEX records carry their address).

Which regions hold loaded bytes is known from the board before linking (:func:`loaded_regions`),
so the build can declare its files; after linking, ``fit.region_images`` reads the bytes from the
ELF's sections (at their load addresses) and :func:`write_region_bins` checks they agree.
"""

from __future__ import annotations

from pathlib import Path

from microbuild.boards import Board
from microbuild.errors import BuildError
from microbuild.firmware import image_steps
from microbuild.firmware.fit import region_images


def loaded_regions(board: Board) -> list[str]:
    """The regions that hold bytes of the image, the boot region first: the boot region (vector
    table or entry code, the copy tables, and the load images of what is copied at reset), and
    each region where a loaded section is placed without a copy (flash banks, QSPI flash, or RAM
    that the boot loader fills itself)."""
    boot = board.boot_region
    if boot is None:
        return []
    regions = board.regions
    loader_places = image_steps.loader_places_sections(board)
    found = [boot.name]
    for kind in ("text", "rodata", "weights", "data"):
        name = board.placement[kind]
        copied = name != boot.name and regions[name].writable and not loader_places
        if not copied and name not in found:
            found.append(name)
    return found


def region_bin_names(name: str, board: Board) -> dict[str, str]:
    """Region -> file name of its .bin, when the image spans several regions; else {}."""
    regions = loaded_regions(board)
    if len(regions) < 2:
        return {}
    return {region: f"{name}.{region}.bin" for region in regions}


def write_region_bins(elf_path: str | Path, board: Board, files: dict[str, Path]) -> str:
    """Write one .bin per region (``files``: region -> path); return what the build prints."""
    images = region_images(elf_path, board)
    unexpected = sorted(set(images) - set(files))
    if unexpected:
        raise BuildError(f"{elf_path}: loaded bytes in region(s) {', '.join(unexpected)}, which "
                         f"the build did not expect from board '{board.name}'s placement")
    parts = []
    for region, path in files.items():
        start, data = images.get(region, (board.regions[region].origin, b""))
        Path(path).write_bytes(data)
        parts.append(f"{Path(path).name} ({region}, {len(data):,} bytes at {start:#010x})")
    return ("the image spans memory regions far apart, so there is one .bin per region instead "
            f"of one that fills the gaps: {', '.join(parts)}; the .hex covers them all")
