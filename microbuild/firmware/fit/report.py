"""What the fit report holds: sections, the bytes each puts in a region, the regions' use,
overflows, and the report's table rows and JSON. Read from the ELF by ``analyze``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from microbuild.boards.board import Board, MemoryRegion
from microbuild.units import kib

# The categories of the classic size table, in the order they are reported.
CATEGORIES = ("text", "rodata", "weights", "data", "bss", "workspace", "state", "stack", "heap")

# What a category is, in words, for messages.
DESCRIPTION = {
    "text": "code",
    "rodata": "constants",
    "weights": "model weights",
    "data": "initialised data",
    "bss": "zero-initialised data",
    "workspace": "model workspace",
    "state": "model state",
    "stack": "stack",
    "heap": "heap",
}

TABLE_HEADER = ("Region", "Used", "Size", "Use%", "Note")


@dataclass(frozen=True)
class SectionInfo:
    """One allocated, non-empty section of the ELF."""

    name: str
    size: int
    vma: int  # run address
    lma: int  # load address; equal to vma unless the section is copied at boot
    nobits: bool  # occupies no bytes in the image (.bss, NOLOAD sections)
    writable: bool
    executable: bool
    category: str  # one of CATEGORIES
    align: int = 1

    @property
    def copied(self) -> bool:
        """Has a load image at a different address (copied to its run address at boot)."""
        return not self.nobits and self.lma != self.vma


@dataclass(frozen=True)
class Contribution:
    """Bytes a section puts in a region: at its run address, or as the load image of a copy."""

    section: str
    bytes: int
    role: str  # "run" or "load"
    address: int
    category: str

    @property
    def end(self) -> int:
        return self.address + self.bytes

    @property
    def label(self) -> str:
        """``.mb_workspace (model workspace)``, ``.data load image (initialised data)``."""
        what = f"{self.section} load image" if self.role == "load" else self.section
        return f"{what} ({DESCRIPTION[self.category]})"


@dataclass(frozen=True)
class Symbol:
    name: str
    size: int
    section: str
    address: int
    role: str  # "run", or "load" for a symbol of a section's load image


@dataclass
class RegionUsage:
    """One memory region of the board and the sections placed in it."""

    name: str
    origin: int
    length: int
    access: str
    contributions: list[Contribution] = field(default_factory=list)  # largest first
    symbols: list[Symbol] = field(default_factory=list)  # the TOP_SYMBOLS largest, largest first

    @property
    def end(self) -> int:
        return self.origin + self.length

    @property
    def used(self) -> int:
        """Sum of the section sizes placed here (what ``size -A`` adds up; no alignment gaps)."""
        return sum(c.bytes for c in self.contributions)

    @property
    def free(self) -> int:
        return max(0, self.length - self.used)

    @property
    def percent(self) -> float:
        return 100.0 * self.used / self.length if self.length else 0.0

    @property
    def over(self) -> int:
        """Bytes past the region's end, measured from the end of the last section placed here
        (alignment gaps included), which is the number ``ld`` reports as "overflowed by"."""
        top = max((c.end for c in self.contributions), default=self.origin)
        return max(0, top - self.end, self.used - self.length)

    @property
    def writable(self) -> bool:
        return "w" in self.access

    def by_category(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for c in self.contributions:
            key = c.category if c.role == "run" else f"{c.category} (load image)"
            totals[key] = totals.get(key, 0) + c.bytes
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "origin": self.origin, "length": self.length,
                "access": self.access, "used": self.used, "free": self.free,
                "percent": round(self.percent, 2), "over": self.over,
                "contributions": [asdict(c) for c in self.contributions],
                "symbols": [asdict(s) for s in self.symbols]}


@dataclass(frozen=True)
class WidenedWeights:
    """Weights that a kernel variant stores wider than the model does (dsp16's int16 filters),
    found in one region by their symbols (``<prefix>_op<N>_weights_<variant>``, see
    compiler/ops/base.py), and the variant with the same arithmetic on half the bytes."""

    opcode: str
    variant: str
    compact: str
    ops: tuple[int, ...]
    bytes: int

    @property
    def saving(self) -> int:
        return self.bytes // 2


@dataclass
class Overflow:
    """A region that the firmware overflows, or (``region`` None) sections outside every region."""

    region: str | None
    origin: int
    length: int
    used: int
    over: int  # bytes past the region's end
    contributions: list[Contribution]  # largest first
    symbols: list[Symbol]  # largest first
    widened: list[WidenedWeights] = field(default_factory=list)  # largest first

    def to_dict(self) -> dict[str, Any]:
        return {"region": self.region, "origin": self.origin, "length": self.length,
                "used": self.used, "over": self.over,
                "contributions": [asdict(c) for c in self.contributions],
                "symbols": [asdict(s) for s in self.symbols],
                "widened_weights": [asdict(w) for w in self.widened]}


@dataclass
class DeviceUsage:
    """One memory device that several regions are windows onto."""

    name: str
    windows: list[str]
    length: int  # the device's size: its largest window
    used: int  # what all its windows hold

    @property
    def over(self) -> int:
        return max(0, self.used - self.length)

    @property
    def percent(self) -> float:
        return 100.0 * self.used / self.length if self.length else 0.0

    @property
    def label(self) -> str:
        return f"{self.name} (= {' + '.join(self.windows)})"


def device_usage(regions: list[RegionUsage], board: Board) -> list[DeviceUsage]:
    """The devices behind ``window_of`` regions, with the bytes of all their windows."""
    groups: dict[str, list[MemoryRegion]] = {}
    for region in board.regions.values():
        if region.window_of:
            groups.setdefault(region.window_of, []).append(region)
    used = {r.name: r.used for r in regions}
    return [DeviceUsage(name, [w.name for w in windows], max(w.length for w in windows),
                        sum(used.get(w.name, 0) for w in windows))
            for name, windows in groups.items()]


@dataclass
class FitReport:
    """What :func:`analyze_elf` found. ``fits`` is False when ``overflows`` is not empty."""

    elf_path: str
    board: str  # the board's name
    is_host: bool
    sections: list[SectionInfo]
    totals: dict[str, int]  # category -> bytes, every key of CATEGORIES present
    regions: list[RegionUsage]  # in the board file's order; empty for the host
    overflows: list[Overflow]
    # Memory devices seen through several regions (memory.regions.*.window_of: an ESP32's
    # IROM and DROM windows onto one flash), each counted once: the windows' bytes added up.
    devices: list[DeviceUsage] = field(default_factory=list)
    # The firmware's workspace arrays, when the build said (firmware/workspaces.py describe()):
    # [{"models": [...], "shared": bool, "bytes": n, ...}]; one shared array counts once.
    workspaces: list[dict[str, Any]] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return not self.overflows

    # Classic totals.
    @property
    def text(self) -> int:
        return self.totals["text"]

    @property
    def rodata(self) -> int:
        return self.totals["rodata"]

    @property
    def weights(self) -> int:
        return self.totals["weights"]

    @property
    def data(self) -> int:
        return self.totals["data"]

    @property
    def bss(self) -> int:
        return self.totals["bss"]

    @property
    def workspace(self) -> int:
        return self.totals["workspace"]

    @property
    def stack(self) -> int:
        return self.totals["stack"]

    @property
    def heap(self) -> int:
        return self.totals["heap"]

    # The names the build summary uses.
    @property
    def workspace_bytes(self) -> int:
        return self.totals["workspace"]

    @property
    def weights_bytes(self) -> int:
        return self.totals["weights"]

    @property
    def stack_bytes(self) -> int:
        return self.totals["stack"]

    @property
    def heap_bytes(self) -> int:
        return self.totals["heap"]

    def region(self, name: str) -> RegionUsage:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {"elf": self.elf_path, "board": self.board, "is_host": self.is_host,
                "fits": self.fits, "totals": dict(self.totals),
                "workspace_bytes": self.workspace_bytes, "weights_bytes": self.weights_bytes,
                "stack_bytes": self.stack_bytes, "heap_bytes": self.heap_bytes,
                "regions": [r.to_dict() for r in self.regions],
                "overflows": [o.to_dict() for o in self.overflows],
                "devices": [{**asdict(d), "over": d.over} for d in self.devices],
                "workspaces": list(self.workspaces),
                "sections": [asdict(s) for s in self.sections]}

    def table_rows(self) -> list[tuple[str, str, str, str, str]]:
        """Rows under :data:`TABLE_HEADER`: one per region; for the host, one per category."""
        shared = next((w for w in self.workspaces if w.get("shared")), None)
        if not self.regions:
            return [(cat, kib(n), "-", "-", DESCRIPTION[cat] + (
                        f" (one of {kib(shared['bytes'])} shared by {', '.join(shared['models'])})"
                        if cat == "workspace" and shared else ""))
                    for cat, n in self.totals.items() if n]
        rows = []
        workspace_region = next((r.name for r in self.regions for c in r.contributions
                                 if c.category == "workspace" and c.role == "run"), None)
        for r in self.regions:
            parts = ", ".join(f"{cat} {kib(n)}" for cat, n in r.by_category().items())
            if shared and r.name == workspace_region:
                # The one workspace the models take turns in, counted once.
                parts += (f" (one workspace of {kib(shared['bytes'])} shared by "
                          f"{', '.join(shared['models'])})")
            note = parts
            if r.over:
                note = f"OVERFLOWS by {kib(r.over)}" + (f": {parts}" if parts else "")
            rows.append((r.name, kib(r.used), kib(r.length), f"{r.percent:.1f}%", note))
        for d in self.devices:
            note = f"one device, counted once: its {len(d.windows)} windows' bytes added up"
            if d.over:
                note = f"OVERFLOWS by {kib(d.over)}: {note}"
            rows.append((d.label, kib(d.used), kib(d.length), f"{d.percent:.1f}%", note))
        for o in self.overflows:
            if o.region is None:
                rows.append(("(outside every region)", kib(o.used), "-", "-",
                             ", ".join(c.section for c in o.contributions)))
        return rows


def split_lines(workspaces: list[dict[str, Any]], buffers_shown: int = 10) -> list[str]:
    """One line per model whose workspace is split across memory regions (the ``split`` of
    firmware/workspaces.py describe()): its bytes per region and which buffers are there."""
    lines = []
    for entry in workspaces:
        for prefix, parts in entry.get("split", {}).items():
            described = []
            for part in parts:
                count = len(part["buffers"])
                names = part["buffers"][:buffers_shown] + (
                    [f"+{count - buffers_shown} more"] if count > buffers_shown else [])
                described.append(f"{part['region']} {kib(part['bytes'])} ({count} "
                                 f"buffer{'s' if count != 1 else ''}: {', '.join(names)})")
            lines.append(f"{prefix} workspace split, hottest buffers first: "
                         + ", ".join(described))
    return lines
