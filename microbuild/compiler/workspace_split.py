"""A workspace larger than the board's first workspace region, split across the regions it lists.

A board may list several regions for the workspace, in order of preference (``placement:
workspace: [dtcm, axi_sram]``): the first is usually small and fast (zero-wait-state TCM), the
next larger and slower. A model whose planned workspace fits the first region's free space is
left exactly as planned (one workspace, the same code). One that does not is split: its buffers
are ranked hottest first and go to the first region while its part still fits, the rest to the
next region, and so on; each region's part is planned again by the planner (buffers alive at the
same time never share bytes within a part; an output may still be written over its input when
both are in the same part).

The first part is the ``workspace`` the caller passes to ``<prefix>_run``; every other part is an
array of the model's own (``<prefix>_workspace_<region>``, in section
``.bss.mb_workspace_<region>.<prefix>``, which the generated linker script places in that region).
The graph's inputs and outputs stay in the first part whatever their rank: the public API
addresses their slots from the workspace pointer (``<prefix>_input0(workspace)``, the
``_OFFSET`` macros the AOT and RPC executors use).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from microbuild.compiler.op_stats import macs as op_macs
from microbuild.compiler.planner import (Buffer, Location, MemoryPlan, _bytes_overlap, align,
                                         place_buffers)
from microbuild.errors import FitError
from microbuild.model.ir import Graph
from microbuild.units import nbytes


@dataclass(frozen=True)
class WorkspaceRegion:
    """One region the workspace may use: its name, the bytes the workspace may take there (the
    region's length minus what else the board places in it), and whether the model's state goes
    there too (its bytes then come off ``free``). ``counted``: how ``free`` was counted, for
    messages ("128 KiB minus 8 KiB stack")."""

    name: str
    free: int
    holds_state: bool = False
    counted: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "free": self.free, "holds_state": self.holds_state,
                "counted": self.counted}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "WorkspaceRegion":
        return WorkspaceRegion(d["name"], int(d["free"]), bool(d.get("holds_state")),
                               d.get("counted", ""))


def buffer_heat(plan: MemoryPlan, graph: Graph) -> list[float]:
    """Per buffer: bytes read and written per inference, per byte of the buffer.

    Why this ranking: the first region is a fixed number of bytes, and what it saves is memory
    accesses to the slower region; filling it by accesses per byte (a knapsack by density) puts
    the most traffic in the fewest bytes. A buffer an operator multiplies from is read once per
    multiply-accumulate in a direct kernel (an im2col scratch area the same), so the op's MACs
    count as its reads of each activation operand; an element-wise op or a copy touches each
    byte once; every output is written once."""
    buffer_of = {t: i for i, b in enumerate(plan.buffers) for t in b.tensors}
    traffic = [0] * len(plan.buffers)
    for op in graph.operators:
        macs = int(op_macs(op, graph) or 0)
        for t in op.inputs:
            if t >= 0 and t in buffer_of:
                traffic[buffer_of[t]] += max(graph.tensors[t].nbytes, macs)
        for t in op.outputs:
            if t >= 0 and t in buffer_of:
                traffic[buffer_of[t]] += graph.tensors[t].nbytes
        scratch = plan.scratch_buffer(op.index)
        if scratch is not None:
            i = plan.buffers.index(scratch)
            traffic[i] += scratch.size + max(scratch.size, macs)
    return [traffic[i] / max(align(b.size), 1) for i, b in enumerate(plan.buffers)]


def _place_part(plan: MemoryPlan, indices: Sequence[int]) -> tuple[int, str]:
    """Plan the buffers ``indices`` (of plan.buffers) as one workspace of their own; sets their
    offsets and returns (bytes, strategy)."""
    if not indices:
        return 0, "empty"
    position = {i: k for k, i in enumerate(indices)}
    pairs = {(position[o], position[n]): rule for (o, n), rule in plan.pairs.items()
             if o in position and n in position}
    return place_buffers([plan.buffers[i] for i in indices], pairs)


def _budgets(plan: MemoryPlan, regions: Sequence[WorkspaceRegion]) -> list[int]:
    """The bytes the workspace may take in each region (the state comes off its region's)."""
    state = align(plan.state_bytes)
    return [r.free - (state if r.holds_state else 0) for r in regions]


def needs_split(plan: MemoryPlan, regions: Sequence[WorkspaceRegion]) -> bool:
    """Whether split_plan would split ``plan``: several regions listed and the workspace over
    the first one's budget."""
    return len(regions) > 1 and plan.workspace_bytes > _budgets(plan, regions)[0]


def split_plan(plan: MemoryPlan, graph: Graph, regions: Sequence[WorkspaceRegion],
               prefix: str = "model") -> MemoryPlan:
    """``plan`` when it fits the first region; else the plan split across ``regions`` (see the
    module comment). Raises FitError naming each region when even the split does not fit."""
    if not needs_split(plan, regions):
        return plan
    if plan.row_region is not None:
        # Row buffers are addressed by offsets in one workspace (row_locations), which a split
        # does not move; compile_model splits the op-by-op plan instead.
        raise ValueError("a row-streamed plan cannot be split across regions")
    budgets = _budgets(plan, regions)

    buffers = plan.buffers
    io = set(graph.inputs) | set(graph.outputs)
    pinned = [i for i, b in enumerate(buffers) if io & set(b.tensors)]
    heat = buffer_heat(plan, graph)
    ranked = sorted((i for i in range(len(buffers)) if i not in pinned),
                    key=lambda i: (-heat[i], i))
    parts: list[list[int]] = [list(pinned)] + [[] for _ in regions[1:]]
    for i in ranked:
        for r in range(len(regions)):
            last = r == len(regions) - 1
            if last or _place_part(plan, parts[r] + [i])[0] <= budgets[r]:
                parts[r].append(i)
                break

    # A region after the first that got no buffer gets no array either.
    used = [r for r in range(len(regions)) if r == 0 or parts[r]]
    regions = [regions[r] for r in used]
    budgets = [budgets[r] for r in used]
    parts = [parts[r] for r in used]
    sizes, strategies = [], []
    for r, part in enumerate(parts):
        size, strategy = _place_part(plan, part)
        for i in part:
            buffers[i].region = r
        sizes.append(size)
        strategies.append(f"{regions[r].name}: {strategy}")
    if any(size > budget for size, budget in zip(sizes, budgets)):
        raise _split_error(plan, regions, budgets, sizes, prefix, io)

    locations = {t: Location(b.offset, b.region) for b in buffers for t in b.tensors}
    overlaps = [c for c in plan.claims
                if locations[c[1]].region == locations[c[2]].region
                and _bytes_overlap(locations, graph, c[1], c[2])]
    return MemoryPlan(buffers=buffers, workspace_bytes=sizes[0], locations=locations,
                      strategy="; ".join(strategies), aliases=plan.aliases,
                      in_place=plan.in_place, overlaps=overlaps,
                      state_locations=plan.state_locations, state_bytes=plan.state_bytes,
                      pairs=plan.pairs, claims=plan.claims,
                      regions=[(r.name, size) for r, size in zip(regions, sizes)])


def _split_error(plan: MemoryPlan, regions: Sequence[WorkspaceRegion], budgets: list[int],
                 sizes: list[int], prefix: str, io: set[int]) -> FitError:
    lines = [f"model '{prefix}': its workspace ({nbytes(plan.workspace_bytes)} planned as one) "
             f"does not fit the regions the board lists for it (memory.placement.workspace: "
             f"{', '.join(r.name for r in regions)}), even split across them:"]
    for r, budget, size in zip(regions, budgets, sizes):
        counted = f" ({r.counted})" if r.counted else ""
        state = (f", after the model's state ({nbytes(align(plan.state_bytes))})"
                 if r.holds_state and plan.state_bytes else "")
        over = size - budget
        lines.append(f"  {r.name}: {nbytes(max(budget, 0))} free{counted}{state}; its part "
                     f"{nbytes(size)}" + (f": OVER by {nbytes(over)}" if over > 0 else
                                           ", fits"))
    pinned = [i for i, b in enumerate(plan.buffers) if b.region == 0 and any(
        t in plan.locations and (t in io) for t in b.tensors)]
    if pinned:
        lines.append(f"The graph's inputs and outputs stay in {regions[0].name} (the API "
                     f"addresses their slots from the workspace pointer): "
                     f"{nbytes(_place_part(plan, pinned)[0])} of its part.")
    total_over = sum(max(0, s - b) for s, b in zip(sizes, budgets))
    lines.append(f"Over by {nbytes(total_over)} in all. Add a larger region to the list, free "
                 f"space in these (a smaller stack or heap there), or use a smaller model.")
    return FitError("\n".join(lines))


def part_symbol(prefix: str, region: str) -> str:
    """The C array holding a model's part of its workspace in ``region`` (every part but the
    first, which is the caller's ``workspace``)."""
    return f"{prefix}_workspace_{region}"


def _short_label(b: Buffer) -> str:
    """``t5`` (``t5=t7`` for tensors sharing the buffer) or ``op 3 CONV_2D scratch``."""
    return "=".join(f"t{t}" for t in b.tensors) if b.tensors else b.label


def describe_parts(plan: MemoryPlan, prefix: str) -> list[dict[str, Any]]:
    """For the summary and the fit report: each part's region, bytes, array and buffers."""
    parts = []
    for r, (name, size) in enumerate(plan.regions):
        parts.append({"region": name, "bytes": size,
                      "symbol": "workspace" if r == 0 else part_symbol(prefix, name),
                      "buffers": [_short_label(b) for b in plan.buffers if b.region == r]})
    return parts


__all__ = ["Buffer", "WorkspaceRegion", "buffer_heat", "describe_parts", "part_symbol",
           "split_plan"]
