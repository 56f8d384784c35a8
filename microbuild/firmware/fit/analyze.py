"""Attributing the ELF's sections to the board's memory regions: what each region holds, what
overflows it, and which weights a kernel variant widened (the compact-variant hint)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Collection

from microbuild.boards.board import Board, MemoryRegion
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.variants import KernelVariant
from microbuild.firmware.fit.elf import (WORKSPACE_PART, category_totals, open_elf, read_sections,
                                        read_symbols, rom_resident_data, stack_size_from_symbols,
                                        with_category)
from microbuild.firmware.fit.report import (Contribution, FitReport, Overflow, RegionUsage,
                                           SectionInfo, Symbol, WidenedWeights, device_usage)

TOP_SYMBOLS = 8

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


def _placement_key(section: str) -> str:
    """The placement key naming the region ``section`` goes to ("region:<name>" for a
    workspace part, which names its region itself)."""
    if section.startswith(WORKSPACE_PART):
        return "region:" + section[len(WORKSPACE_PART):]
    return _PLACEMENT_KEY.get(section, "")


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
    elf = open_elf(elf_path)
    indexed = read_sections(elf)
    names = {index: s.name for index, s in indexed}
    symbols = read_symbols(elf, names)
    stack_from_symbols = stack_size_from_symbols(elf)

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
            s = with_category(s, "rodata")
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

    totals = category_totals(sections if region_list else rom_resident_data(sections))
    if not region_list and not totals["workspace"]:
        # The host's own linker script merges .bss.mb_workspace.* into .bss: count the workspace
        # arrays by their symbols instead (mb_aot_workspace_<prefix>, see firmware/aot.py).
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

    linked = {name for name, _, _, _ in symbols}
    overflows = [Overflow(r.name, r.origin, r.length, r.used, r.over, list(r.contributions),
                          list(r.symbols),
                          widened_weights(region_symbols.get(r.name, []), linked))
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


# <prefix>_op<N>_weights_<variant>, as compiler/ops/base.py names the arrays a variant arranged;
# a variant's name may hold underscores (dsp_wide).
_WEIGHTS_SYMBOL = re.compile(r"_op(\d+)_weights_(\w+)$")


def _is_linked(function: str, linked: Collection[str]) -> bool:
    """Whether a variant's kernel function is among the linked symbols; a name chosen at emit
    time (SVDF's mb_svdf_s8_{state}_dsp_wide) matches any linked name with its two ends."""
    if "{" not in function:
        return function in linked
    head, tail = function.split("{")[0], function.split("}")[-1]
    return any(n.startswith(head) and n.endswith(tail) for n in linked)


def widened_weights(symbols: list[Symbol], linked: Collection[str] = ()) -> list[WidenedWeights]:
    """The arrays of ``symbols`` that a variant with a ``compact`` alternative widened, per
    (opcode, variant), largest first. ``linked``: every symbol name of the firmware; where
    several operators have a widening variant of one name (FULLY_CONNECTED's and the LSTM's
    dsp_wide), the one whose kernel function is linked is meant."""
    compact: dict[str, list[KernelVariant]] = {}
    for lowering in REGISTRY.values():
        for v in lowering.variants:
            if v.compact:
                compact.setdefault(v.name, []).append(v)
    found: dict[tuple[str, str], tuple[set[int], int]] = {}
    for y in symbols:
        m = _WEIGHTS_SYMBOL.search(y.name)
        if y.role != "run" or not m or m.group(2) not in compact:
            continue
        same_name = compact[m.group(2)]
        variant = next((v for v in same_name if _is_linked(v.function, linked)), same_name[0])
        key = (variant.opcode, variant.name)
        ops, total = found.get(key, (set(), 0))
        found[key] = (ops | {int(m.group(1))}, total + y.size)
    compact_of = {(v.opcode, v.name): v.compact for same in compact.values() for v in same}
    widened = [WidenedWeights(opcode, name, compact_of[opcode, name], tuple(sorted(ops)), total)
               for (opcode, name), (ops, total) in found.items()]
    return sorted(widened, key=lambda w: -w.bytes)
