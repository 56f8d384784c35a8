"""What every post-link image step is (the package's __init__ lists the steps): a class with a
name, what it does to the link, and the files it writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from microbuild.boards import Board


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


def board_relative(board: Board, path: str) -> Path:
    """A path from the board YAML, relative to the file that defines the board."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else Path(board.files[0]).parent / candidate
