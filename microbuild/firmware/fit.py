"""Does the linked firmware fit the board? Read the ELF, attribute every byte to a memory region.

Every allocated section counts in the region where it runs (its VMA). A section that is copied at
boot (``.data``: run address in RAM, load address in flash) counts a second time, as a load image,
in the region holding its load address. A section that extends past the end of its region, or lies
outside every region, is an overflow.

``ld --noinhibit-exec`` still writes an ELF after a region overflow, with the sections that did not
fit at addresses past the region's end; :func:`analyze_elf` reads such an ELF and attributes those
sections to the region the linker script put them in, so :func:`fit_error` can say what is using
the region and by how much it overflows.

For the host (no memory map) only the section totals are reported.
"""

from __future__ import annotations

import io
import re
import textwrap
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from microbuild.boards.board import Board, MemoryRegion
from microbuild.compiler.ops import REGISTRY
from microbuild.errors import BuildError, FitError, MicrobuildError
from microbuild.units import kib, nbytes

TOP_SYMBOLS = 8

# The categories of the classic size table, in the order they are reported.
CATEGORIES = ("text", "rodata", "weights", "data", "bss", "workspace", "state", "stack", "heap")

# Sections with a fixed role, whatever their flags say.
_NAMED = {
    ".mb_vectors": "text",
    ".mb_start": "text",
    ".mb_boot": "text",
    ".mb_weights": "weights",
    ".mb_workspace": "workspace",
    ".mb_state": "state",
    ".stack": "stack",
    ".heap": "heap",
    ".mb_copy_table": "rodata",
    ".mb_zero_table": "rodata",
}

# The sections whose region the board's placement names (memory.placement.<key>), so that one
# that overflowed its region, even into the next region's addresses, is blamed on the right one.
# Other sections are attributed by address alone.
# "boot": the board's boot region (memory.boot), where load images and the code that runs before
# anything is copied live.
_PLACEMENT_KEY = {
    ".mb_vectors": "text", ".mb_start": "boot", ".text": "text", ".mb_boot": "boot",
    ".mb_boot2": "boot", ".mb_copy_table": "boot", ".mb_zero_table": "boot",
    ".rodata": "rodata", ".mb_weights": "weights", ".data": "data", ".bss": "bss",
    ".mb_workspace": "workspace", ".mb_state": "state", ".heap": "heap", ".stack": "stack",
}

# A section that starts past the end of every region is taken to have overflowed the region below
# it when it starts at most this far past that region's last section (alignment gaps).
_SPILL_SLACK = 4096

# What a category is, in words, for messages.
_DESCRIPTION = {
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

_NUMBER_UNIT = re.compile(r"(\d) (bytes?|KiB|MiB|B)\b")

TABLE_HEADER = ("Region", "Used", "Size", "Use%", "Note")


# --- report data ---------------------------------------------------------------------------------

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
        return f"{what} ({_DESCRIPTION[self.category]})"


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
            return [(cat, kib(n), "-", "-", _DESCRIPTION[cat] + (
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

    def error(self) -> FitError:
        return fit_error(self)


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


# --- reading the ELF -----------------------------------------------------------------------------

def _open(elf_path: str | Path) -> ELFFile:
    """The ELF, read into memory (firmware images are small)."""
    try:
        data = Path(elf_path).read_bytes()
    except OSError as e:
        raise MicrobuildError(
            f"{elf_path}: cannot read the linked firmware ({e.strerror or e})") from e
    try:
        return ELFFile(io.BytesIO(data))
    except ELFError as e:
        raise MicrobuildError(f"{elf_path}: not an ELF file ({e})") from e


def load_address(elf: ELFFile, sec) -> int:
    """The section's load address (LMA): from the PT_LOAD segment that holds it."""
    addr, size = sec["sh_addr"], sec["sh_size"]
    if sec["sh_type"] == "SHT_NOBITS":
        return addr  # nothing to load; a NOLOAD section's segment LMA is meaningless
    for seg in elf.iter_segments():
        if seg["p_type"] != "PT_LOAD":
            continue
        if not (seg["p_vaddr"] <= addr and addr + size <= seg["p_vaddr"] + seg["p_memsz"]):
            continue
        if not (seg["p_offset"] <= sec["sh_offset"] < seg["p_offset"] + max(seg["p_filesz"], 1)):
            continue
        return seg["p_paddr"] + (addr - seg["p_vaddr"])
    return addr


# A model's workspace part in another region than the first (.mb_workspace_<region>: a workspace
# split across the regions memory.placement.workspace lists).
def region_images(elf_path: str | Path, board: Board) -> dict[str, tuple[int, bytes]]:
    """Region name -> (start address, bytes) of the loaded bytes there (at their load
    addresses), gaps between sections filled with zeros (as objcopy does)."""
    regions = list(board.regions.values())
    pieces: dict[str, list[tuple[int, bytes]]] = {}
    with open(elf_path, "rb") as f:
        elf = ELFFile(f)
        # Sections, as objcopy reads them, not program headers: ld may map the ELF's own
        # headers into the first segment when they fit below the image.
        for section in elf.iter_sections():
            if (not section["sh_flags"] & SH_FLAGS.SHF_ALLOC or section["sh_size"] == 0
                    or section["sh_type"] == "SHT_NOBITS"):
                continue
            address = load_address(elf, section)
            region = next((r for r in regions if r.origin <= address < r.end), None)
            if region is None:
                raise BuildError(f"{elf_path}: section {section.name} is loaded at "
                                 f"{address:#010x}, in no memory region of board '{board.name}'")
            pieces.setdefault(region.name, []).append((address, section.data()))
    images = {}
    for name, parts in pieces.items():
        parts.sort()
        start = parts[0][0]
        end = max(a + len(d) for a, d in parts)
        image = bytearray(end - start)
        for address, data in parts:
            image[address - start:address - start + len(data)] = data
        images[name] = (start, bytes(image))
    return images


_WORKSPACE_PART = ".mb_workspace_"


def _placement_key(section: str) -> str:
    """The placement key naming the region ``section`` goes to ("region:<name>" for a
    workspace part, which names its region itself)."""
    if section.startswith(_WORKSPACE_PART):
        return "region:" + section[len(_WORKSPACE_PART):]
    return _PLACEMENT_KEY.get(section, "")


def _category(name: str, writable: bool, executable: bool, nobits: bool) -> str:
    if name.startswith(_WORKSPACE_PART):
        return "workspace"
    if name in _NAMED:
        return _NAMED[name]
    if executable:
        return "text"
    if not writable:
        return "rodata"
    return "bss" if nobits else "data"


def _read_sections(elf: ELFFile) -> list[tuple[int, SectionInfo]]:
    out = []
    for index, sec in enumerate(elf.iter_sections()):
        flags = sec["sh_flags"]
        if not flags & SH_FLAGS.SHF_ALLOC or sec["sh_size"] == 0:
            continue
        writable = bool(flags & SH_FLAGS.SHF_WRITE)
        executable = bool(flags & SH_FLAGS.SHF_EXECINSTR)
        nobits = sec["sh_type"] == "SHT_NOBITS"
        out.append((index, SectionInfo(
            name=sec.name, size=sec["sh_size"], vma=sec["sh_addr"], lma=load_address(elf, sec),
            nobits=nobits, writable=writable, executable=executable,
            category=_category(sec.name, writable, executable, nobits),
            align=max(1, sec["sh_addralign"]))))
    return out


def _read_symbols(elf: ELFFile, names: dict[int, str]) -> list[tuple[str, int, int, int]]:
    """(name, size, value, section index) of every sized object and function, aliases merged."""
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        return []
    seen: dict[tuple[int, int, int], tuple[str, int, int, int, bool]] = {}
    for sym in symtab.iter_symbols():
        if sym["st_info"]["type"] not in ("STT_OBJECT", "STT_FUNC") or sym["st_size"] <= 0:
            continue
        shndx = sym["st_shndx"]
        if not isinstance(shndx, int) or shndx not in names or not sym.name:
            continue
        value = sym["st_value"]
        if sym["st_info"]["type"] == "STT_FUNC" and elf["e_machine"] == "EM_ARM":
            value &= ~1  # the Thumb bit
        key = (shndx, value, sym["st_size"])
        is_global = sym["st_info"]["bind"] != "STB_LOCAL"
        if key not in seen or (is_global and not seen[key][4]):
            seen[key] = (sym.name, sym["st_size"], value, shndx, is_global)
    return [entry[:4] for entry in seen.values()]


def _stack_from_symbols(elf: ELFFile) -> int:
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        return 0
    limit = symtab.get_symbol_by_name("__mb_stack_limit")
    top = symtab.get_symbol_by_name("__mb_stack_top")
    if limit and top:
        return max(0, top[0]["st_value"] - limit[0]["st_value"])
    return 0


def _totals(sections: list[SectionInfo]) -> dict[str, int]:
    totals = dict.fromkeys(CATEGORIES, 0)
    for s in sections:
        totals[s.category] += s.size
    return totals


def _rom_resident_data(sections: list[SectionInfo]) -> list[SectionInfo]:
    """Without a memory map: when the image copies some sections to RAM at boot, a writable
    section that is *not* copied (``.init_array`` in flash, say) is read-only in practice."""
    if not any(s.copied for s in sections):
        return sections
    return [_with_category(s, "rodata") if s.category == "data" and not s.copied else s
            for s in sections]


def _with_category(s: SectionInfo, category: str) -> SectionInfo:
    return replace(s, category=category)


def section_totals(elf_path: str | Path) -> dict[str, int]:
    """Bytes per category (``text``, ``rodata``, ``weights``, ``data``, ``bss``, ``workspace``,
    ``stack``, ``heap``) of any ELF, without a board."""
    elf = _open(elf_path)
    totals = _totals(_rom_resident_data([s for _, s in _read_sections(elf)]))
    if not totals["stack"]:
        totals["stack"] = _stack_from_symbols(elf)
    return totals


# --- attributing sections to regions -------------------------------------------------------------

def _containing(regions: list[MemoryRegion], addr: int) -> MemoryRegion | None:
    for r in regions:
        if r.origin <= addr < r.end:
            return r
    return None


def _region_of(addr: int, align: int, preferred: MemoryRegion | None,
               regions: list[MemoryRegion], tops: dict[str, int]) -> MemoryRegion | None:
    """The region a section at ``addr`` was placed in, or None if it is outside every region.

    ``preferred`` is where the board's placement says the section goes; ``tops`` is the end of
    the last section attributed to each region so far (sections are visited by address). A
    section past the end of a region, right after that region's other sections, has overflowed
    it: ld keeps placing sections past a full region's end (``--noinhibit-exec``), even into the
    addresses of the next region when the two are back to back.
    """
    slack = max(_SPILL_SLACK, align)

    def follows(r: MemoryRegion) -> bool:
        return r.origin <= addr and addr - tops[r.name] <= slack

    if preferred is not None and preferred.origin <= addr < preferred.end:
        return preferred
    containing = _containing(regions, addr)
    if preferred is not None and addr >= preferred.end and follows(preferred):
        return preferred
    if containing is not None:
        return containing
    below = [r for r in regions if r.origin <= addr]
    nearest = max(below, key=lambda r: r.origin) if below else None
    return nearest if nearest is not None and follows(nearest) else None


def analyze_elf(elf_path: str | Path, board: Board,
                workspaces: list[dict[str, Any]] | None = None) -> FitReport:
    """Read a linked firmware and attribute its sections to ``board``'s memory regions.
    ``workspaces``: which models use which workspace array (firmware/workspaces.py describe()),
    reported as given."""
    elf = _open(elf_path)
    indexed = _read_sections(elf)
    names = {index: s.name for index, s in indexed}
    symbols = _read_symbols(elf, names)
    stack_from_symbols = _stack_from_symbols(elf)

    region_list = [] if board.is_host else list(board.regions.values())
    placement = board.placement
    by_name = {r.name: r for r in region_list}
    boot = None if board.is_host else board.boot_region
    placement = {**placement, "boot": boot.name if boot is not None else "",
                 **{f"region:{name}": name for name in by_name}}

    usage = {r.name: RegionUsage(r.name, r.origin, r.length, r.access) for r in region_list}
    unplaced: list[Contribution] = []
    # Section index -> [(region name or None, role, load offset from vma)]
    homes: dict[int, list[tuple[str | None, str, int]]] = {}
    sections: list[SectionInfo] = []

    # Attribute run and load addresses to regions in address order, so that a section past a
    # region's end can be recognised as following that region's last section.
    by_index = dict(indexed)
    places = sorted([(s.vma, index, "run") for index, s in indexed]
                    + [(s.lma, index, "load") for index, s in indexed if s.copied])
    tops = {r.name: r.origin for r in region_list}
    home: dict[tuple[int, str], MemoryRegion | None] = {}
    for address, index, role in places:
        s = by_index[index]
        key = "boot" if role == "load" else _placement_key(s.name)
        region = _region_of(address, s.align, by_name.get(placement.get(key, "")), region_list,
                            tops)
        if region is not None:
            tops[region.name] = max(tops[region.name], address + s.size)
        home[(index, role)] = region

    for index, s in indexed:
        if not region_list:
            sections.append(s)
            continue
        run = home[(index, "run")]
        # A writable section that runs from a read-only region and is not copied there is
        # read-only in practice (.init_array, linker-made tables in flash).
        if s.category == "data" and not s.copied and run is not None and not run.writable:
            s = _with_category(s, "rodata")
        sections.append(s)
        homes[index] = []
        for role, address in [("run", s.vma)] + ([("load", s.lma)] if s.copied else []):
            region = home[(index, role)]
            c = Contribution(s.name, s.size, role, address, s.category)
            if region is None:
                unplaced.append(c)
            else:
                usage[region.name].contributions.append(c)
            homes[index].append((region.name if region else None, role, address - s.vma))

    totals = _totals(sections if region_list else _rom_resident_data(sections))
    if not region_list and not totals["workspace"]:
        # The host's own linker script merges .bss.mb_workspace.* into .bss: count the workspace
        # arrays by their symbols instead (mb_aot_workspace_<prefix>, see build/aot.py).
        workspace = sum(size for name, size, _, _ in symbols
                        if name.startswith("mb_aot_workspace_") or name == "mb_aot_shared_workspace")
        state = sum(size for name, size, _, _ in symbols if name.startswith("mb_aot_state_"))
        totals["workspace"] = workspace
        totals["state"] = state
        totals["bss"] = max(0, totals["bss"] - workspace - state)
    if not totals["stack"]:
        totals["stack"] = stack_from_symbols

    region_symbols: dict[str | None, list[Symbol]] = {}
    for name, size, value, shndx in symbols:
        for region_name, role, offset in homes.get(shndx, []):
            region_symbols.setdefault(region_name, []).append(
                Symbol(name, size, names[shndx], value + offset, role))

    def top(syms: list[Symbol]) -> list[Symbol]:
        return sorted(syms, key=lambda y: (-y.size, y.name))[:TOP_SYMBOLS]

    for r in usage.values():
        r.contributions.sort(key=lambda c: (-c.bytes, c.section))
        r.symbols = top(region_symbols.get(r.name, []))

    overflows = [Overflow(r.name, r.origin, r.length, r.used, r.over, list(r.contributions),
                          list(r.symbols), widened_weights(region_symbols.get(r.name, [])))
                 for r in usage.values() if r.over > 0]
    if unplaced:
        unplaced.sort(key=lambda c: (-c.bytes, c.section))
        total = sum(c.bytes for c in unplaced)
        overflows.append(Overflow(None, 0, 0, total, total, unplaced,
                                  top(region_symbols.get(None, []))))

    devices = [] if board.is_host else device_usage(list(usage.values()), board)
    for d in devices:
        if d.over:
            windows = [usage[w] for w in d.windows]
            overflows.append(Overflow(
                d.label, min(w.origin for w in windows), d.length, d.used, d.over,
                sorted((c for w in windows for c in w.contributions),
                       key=lambda c: (-c.bytes, c.section)),
                top([y for w in d.windows for y in region_symbols.get(w, [])])))

    return FitReport(elf_path=str(elf_path), board=board.name, is_host=board.is_host,
                     sections=sections, totals=totals, regions=list(usage.values()),
                     overflows=overflows, devices=devices,
                     workspaces=list(workspaces or []))


_WEIGHTS_SYMBOL = re.compile(r"_op(\d+)_weights_([A-Za-z0-9]+)$")


def widened_weights(symbols: list[Symbol]) -> list[WidenedWeights]:
    """The arrays of ``symbols`` that a variant with a ``compact`` alternative widened, per
    (opcode, variant), largest first."""
    compact = {v.name: (v.opcode, v.compact) for lowering in REGISTRY.values()
               for v in lowering.variants if v.compact}
    found: dict[str, tuple[set[int], int]] = {}
    for y in symbols:
        m = _WEIGHTS_SYMBOL.search(y.name)
        if y.role == "run" and m and m.group(2) in compact:
            ops, total = found.get(m.group(2), (set(), 0))
            found[m.group(2)] = (ops | {int(m.group(1))}, total + y.size)
    widened = [WidenedWeights(compact[v][0], v, compact[v][1], tuple(sorted(ops)), total)
               for v, (ops, total) in found.items()]
    return sorted(widened, key=lambda w: -w.bytes)


def _op_list(ops: tuple[int, ...]) -> str:
    """"op 3", "ops 0-8", "ops 1, 4, 7"."""
    if len(ops) == 1:
        return f"op {ops[0]}"
    if list(ops) == list(range(ops[0], ops[-1] + 1)):
        return f"ops {ops[0]}-{ops[-1]}"
    return "ops " + ", ".join(str(i) for i in ops)


# --- the message ---------------------------------------------------------------------------------

def _advice(o: Overflow, regions: list[RegionUsage], split_from: bool = False) -> list[str]:
    """What the user can change for one overflowed region, the biggest lever first. A part is
    mentioned when changing it alone could fix the overflow, or when it is the largest user.
    ``split_from``: a workspace was split from this region already (its part was sized to the
    region's free space, leaving DATA_RESERVE for .data/.bss, which turned out too little)."""
    ram = next((r.writable for r in regions if r.name == o.region), True)
    run: dict[str, int] = {}
    for c in o.contributions:
        if c.role == "run":
            key = "code" if c.category in ("text", "rodata") else c.category
            run[key] = run.get(key, 0) + c.bytes
    largest = max(run, key=lambda k: run[k], default="")

    def matters(part: str) -> bool:
        return run.get(part, 0) > 0 and (run[part] >= o.over or part == largest)

    def elsewhere(need: int, must_write: bool) -> str:
        homes = [r for r in regions if r.name != o.region and r.free >= need
                 and (r.writable or not must_write)]
        if not homes:
            return ""
        return " (" + ", ".join(f"{r.name} has {kib(r.free)} free" for r in homes) + ")"

    levers: list[tuple[int, str]] = []
    if matters("workspace"):
        levers.append((run["workspace"], "place the workspace in a larger region "
                       "(memory.placement.workspace in the board YAML)"
                       + elsewhere(run["workspace"], True)
                       + ("" if split_from else
                          f" or list a second region after {o.region} to split it across them "
                          f"(workspace: [{o.region}, <region>])")))
    if matters("weights"):
        levers.append((run["weights"], "place the weights in a larger region "
                       "(memory.placement.weights in the board YAML)"
                       + elsewhere(run["weights"], False)))
    if matters("stack"):
        stack = f"lower memory.stack_size (now {kib(run['stack'])}) if the firmware needs less"
        levers.append((run["stack"], stack + " stack"))
    if matters("heap"):
        levers.append((run["heap"], f"lower memory.heap_size (now {kib(run['heap'])})"))
    if matters("code"):
        levers.append((run["code"], "optimise the code for size (-Os in toolchain.cflags)"))
    for w in o.widened:
        # A tuning log picks the fastest variant whatever its flash; --variant overrides it.
        levers.append((w.saving, f"build with `--variant {w.opcode}={w.compact}` ({w.variant} "
                       f"stores the {w.opcode} weights of {_op_list(w.ops)} widened to int16, "
                       f"{kib(w.bytes)}; {w.compact} runs the same arithmetic on int8 weights, "
                       f"{kib(w.saving)} less, and overrides a tuning log's choice)"))
    tips = [tip for _, tip in sorted(levers, key=lambda lever: -lever[0])]
    tips.append(f"choose a board with more {'RAM' if ram else 'flash'}")
    if matters("workspace") or matters("weights"):
        tips.append("use a smaller model")
    return tips


def _para(text: str) -> str:
    """A paragraph of the message: indented two spaces, wrapped at 100 columns."""
    glued = _NUMBER_UNIT.sub(lambda m: m.group(1) + "\0" + m.group(2), text)  # keep "8 bytes"
    return textwrap.fill(glued, 100, initial_indent="  ", subsequent_indent="  ",
                         break_long_words=False, break_on_hyphens=False).replace("\0", " ")


def _join_or(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + ", or " + items[-1]


def _overflow_summary(o: Overflow, at_least: bool = False) -> str:
    if o.region is None:
        return f"{nbytes(o.used)} lie outside every memory region"
    return f"region {o.region} overflows by {'at least ' if at_least else ''}{nbytes(o.over)}"


def fit_error(report: FitReport, lower_bound: str | None = None) -> FitError:
    """A :class:`FitError` explaining every overflow of ``report`` and what to do about it.

    ``lower_bound``: the report was estimated before linking, from part of the firmware only
    (see scons_tool._check_object_sizes); this paragraph says how, and the overflows are "at
    least" the numbers given."""
    if report.fits:
        raise ValueError("fit_error() called for a firmware that fits")
    summaries = [_overflow_summary(o, lower_bound is not None) for o in report.overflows]
    summary = summaries[0] if len(summaries) == 1 else "; ".join(summaries)
    lines = [f"The firmware does not fit on board {report.board}: {summary}."]
    if lower_bound:
        lines += ["", _para(lower_bound)]
    split = split_lines(report.workspaces)
    if split:
        lines += ["", *(_para(line) for line in split)]
    for o in report.overflows:
        lines.append("")
        if o.region is None:
            where = ", ".join(c.section for c in o.contributions)
            lines.append(f"  Outside every region ({where}):")
        else:
            padding = o.length + o.over - o.used
            pad = f" plus {padding:,} bytes of alignment padding" if padding > 0 else ""
            lines.append(_para(f"{o.region}: {nbytes(o.length)} at 0x{o.origin:08x}. The "
                               f"firmware places {nbytes(o.used)} there{pad}: {nbytes(o.over)} "
                               "more than the region holds."))
            for c in o.contributions:
                if c.bytes > o.length:
                    lines.append(_para(f"The {_DESCRIPTION[c.category]} alone ({c.section}, "
                                       f"{kib(c.bytes)}) is larger than the whole region "
                                       f"({kib(o.length)})."))
            lines.append("  Using it:")
        width = max(len(c.label) for c in o.contributions)
        for c in o.contributions:
            lines.append(f"    {c.label:<{width}}  {c.bytes:>11,} bytes  {kib(c.bytes):>10}")
        if o.symbols:
            lines.append("  Largest symbols:")
            width = max(len(y.name) for y in o.symbols)
            for y in o.symbols:
                where = y.section + (" load image" if y.role == "load" else "")
                lines.append(f"    {y.name:<{width}}  {y.size:>11,} bytes  {kib(y.size):>10}"
                             f"  in {where}")
        if o.region is None:
            lines.append(_para("To fix it: check the memory regions in the board YAML and the "
                               "linker script; every section must be placed in one of them."))
        else:
            # A workspace split from this region: its first part (.mb_workspace) is here and
            # further parts (.mb_workspace_<region>) elsewhere.
            split_from = (any(c.section == ".mb_workspace" for c in o.contributions)
                          and any(c.section.startswith(_WORKSPACE_PART)
                                  for r in report.regions for c in r.contributions))
            advice = _advice(o, report.regions, split_from)
            if split_from:
                from microbuild.firmware.workspaces import DATA_RESERVE

                advice.insert(0, f"the workspace split left {nbytes(DATA_RESERVE)} of "
                                 f"{o.region} for .data and .bss, and they need more: move them "
                                 f"to another region (memory.placement.data and .bss) or make "
                                 f"them smaller")
            lines.append(_para(f"To fix it: {_join_or(advice)}."))
    err = FitError("\n".join(lines))
    err.report = report  # type: ignore[attr-defined]
    return err
