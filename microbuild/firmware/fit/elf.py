"""Reading the linked ELF: its allocated sections with their run and load addresses, sized
symbols, per-category totals, and the loaded bytes of each memory region."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from microbuild.boards.board import Board
from microbuild.errors import BuildError, MicrobuildError
from microbuild.firmware.fit.report import CATEGORIES, SectionInfo

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

WORKSPACE_PART = ".mb_workspace_"


def open_elf(elf_path: str | Path) -> ELFFile:
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


def _category(name: str, writable: bool, executable: bool, nobits: bool) -> str:
    if name.startswith(WORKSPACE_PART):
        return "workspace"
    if name in _NAMED:
        return _NAMED[name]
    if executable:
        return "text"
    if not writable:
        return "rodata"
    return "bss" if nobits else "data"


def read_sections(elf: ELFFile) -> list[tuple[int, SectionInfo]]:
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


def read_symbols(elf: ELFFile, names: dict[int, str]) -> list[tuple[str, int, int, int]]:
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


def stack_size_from_symbols(elf: ELFFile) -> int:
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        return 0
    limit = symtab.get_symbol_by_name("__mb_stack_limit")
    top = symtab.get_symbol_by_name("__mb_stack_top")
    if limit and top:
        return max(0, top[0]["st_value"] - limit[0]["st_value"])
    return 0


def category_totals(sections: list[SectionInfo]) -> dict[str, int]:
    totals = dict.fromkeys(CATEGORIES, 0)
    for s in sections:
        totals[s.category] += s.size
    return totals


def rom_resident_data(sections: list[SectionInfo]) -> list[SectionInfo]:
    """Without a memory map: when the image copies some sections to RAM at boot, a writable
    section that is *not* copied (``.init_array`` in flash, say) is read-only in practice."""
    if not any(s.copied for s in sections):
        return sections
    return [with_category(s, "rodata") if s.category == "data" and not s.copied else s
            for s in sections]


def with_category(s: SectionInfo, category: str) -> SectionInfo:
    return replace(s, category=category)


def section_totals(elf_path: str | Path) -> dict[str, int]:
    """Bytes per category (``text``, ``rodata``, ``weights``, ``data``, ``bss``, ``workspace``,
    ``stack``, ``heap``) of any ELF, without a board."""
    elf = open_elf(elf_path)
    totals = category_totals(rom_resident_data([s for _, s in read_sections(elf)]))
    if not totals["stack"]:
        totals["stack"] = stack_size_from_symbols(elf)
    return totals
