"""One cell of the CI matrix and the sizes recorded for it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Statuses: ok (built, fits); does-not-fit (built, the fit check refused it: not a failure);
# not-applicable (e.g. the toolchain is not installed here... never silently: the message says);
# failed (a real build error: fails the run, message holds the compiler's output).
STATUSES = ("ok", "does-not-fit", "not-applicable", "failed")
SIZE_FIELDS = ("text", "rodata", "data", "bss", "ram_used", "ram_size", "flash_used", "flash_size")


@dataclass
class Cell:
    board: str
    toolchain: str
    model: str  # the model's file stem
    executor: str = "aot"
    model_path: str = ""
    status: str = "pending"
    text: int = 0
    rodata: int = 0  # constants and model weights
    data: int = 0
    bss: int = 0  # zero-initialised data, the model workspace, stack and heap
    ram_used: int = 0
    ram_size: int = 0
    flash_used: int = 0
    flash_size: int = 0
    build_seconds: float = 0.0
    message: str = ""
    elf: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.board, self.toolchain, self.model, self.executor)

    @property
    def cell_id(self) -> str:
        """A file-name-safe id: board-toolchain-model-executor."""
        return re.sub(r"[^A-Za-z0-9._-]", "_", "-".join(self.key))

    @property
    def ram_percent(self) -> float | None:
        return 100.0 * self.ram_used / self.ram_size if self.ram_size else None

    @property
    def flash_percent(self) -> float | None:
        return 100.0 * self.flash_used / self.flash_size if self.flash_size else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ram_percent"] = None if self.ram_percent is None else round(self.ram_percent, 2)
        d["flash_percent"] = None if self.flash_percent is None else round(self.flash_percent, 2)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Cell":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


def apply_fit_report(cell: Cell, size: dict[str, Any]) -> None:
    """Fill ``cell``'s sizes from a fit report (microbuild.firmware.fit FitReport.to_dict()).

    Classic columns as `size` would report them: text = code; rodata = constants + weights;
    data = initialised data; bss = everything else in RAM (zeroed data, workspace, stack, heap).
    RAM and flash: bytes used in the board's writable and read-only regions."""
    totals = size.get("totals", {})
    cell.text = int(totals.get("text", 0))
    cell.rodata = int(totals.get("rodata", 0)) + int(totals.get("weights", 0))
    cell.data = int(totals.get("data", 0))
    cell.bss = sum(int(totals.get(k, 0)) for k in ("bss", "workspace", "stack", "heap"))
    cell.ram_used = cell.ram_size = cell.flash_used = cell.flash_size = 0
    for region in size.get("regions", []):
        writable = "w" in region.get("access", "")
        if writable:
            cell.ram_used += int(region["used"])
            cell.ram_size += int(region["length"])
        else:
            cell.flash_used += int(region["used"])
            cell.flash_size += int(region["length"])
    if size.get("elf"):
        cell.elf = str(Path(size["elf"]))


def cell_from_build_json(document: dict[str, Any], model_path: str = "") -> Cell:
    """A cell from `microbuild build --json` output (what a distributed CI job uploads)."""
    models = document.get("models", [])
    model = Path(models[0]["model"]).stem if models else Path(model_path).stem
    cell = Cell(board=document["board"], toolchain=document["toolchain"], model=model,
                executor=document.get("executor", "aot"),
                model_path=models[0]["model"] if models else model_path, status="ok")
    apply_fit_report(cell, document["size"])
    return cell
