"""Static memory planning: where every run-time tensor lives.

Constants live in the weights section; every other tensor -- graph inputs and outputs included,
as in TFLM's arena -- and every per-operator scratch area is placed in one workspace at
16-byte-aligned offsets decided here at compile time. Keeping the inputs and outputs in the
workspace lets their bytes be reused once they are dead (a 96x96x3 image is 27 KiB that no later
layer needs); the generated ``run`` copies a caller's buffer in or out only when the caller did not
pass the planned slot itself. A graph input is alive from the start of the run to its last reader,
a graph output from its producer to the end of the run.

Two tensors can share bytes when their lifetimes (first producer .. last consumer, in op order) do
not overlap. On top of that:

- a RESHAPE (any lowering whose ``aliases_input`` is true) does not copy: its output *is* its
  input, so both tensors form one buffer whose lifetime is the union;
- an op whose lowering names an ``in_place_input`` (element-wise ops: input 0; a fused
  CONV_2D+ADD: its residual operand) writes its output over that input when it dies at that op and
  both have the same size.

- an op whose kernel walks its output pixels in order (CONV_2D, DEPTHWISE_CONV_2D, pooling; see
  ``OpLowering.overlap`` and microbuild/compiler/overlap.py) may write its output over the input
  it is the last reader of, when the output starts at least a computed distance below the input:
  a pointwise convolution from 48x48x8 to 48x48x16 needs 36,864 + 8 bytes instead of 55,296.

Placement tries several orderings (size, lifetime length, first use, size x lifetime) with
first-fit and best-fit, plus walks (in execution order and in each of those orders) that place
each buffer where the workspace grows least (below everything placed if need be: an overlapping
output goes below its input), then pack the result down; it keeps the smallest workspace. TFLM's planner is one of
these combinations (greedy by size, first fit) without the sharing above, so the result is never
larger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from microbuild.compiler.ops.base import OpLowering
from microbuild.compiler.overlap import Overlap
from microbuild.compiler.op_stats import live_bytes
from microbuild.compiler import row_stream_fc
from microbuild.compiler.row_stream import (BAND_ROWS_TRIED, RowRegion, build_region,
                                            candidate_spans, region_cost, streamable_ops)
from microbuild.model.ir import Graph

ALIGNMENT = 16


def align(n: int, alignment: int = ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment


@dataclass
class Buffer:
    """One region of the workspace: the tensors that share it, or one op's scratch area."""

    label: str
    tensors: tuple[int, ...]  # tensor indices sharing these bytes (empty for scratch)
    size: int  # bytes needed (not rounded)
    first_op: int  # alive from the start of this op ...
    last_op: int  # ... to the end of this one
    offset: int = 0
    scratch_op: int | None = None  # the op that owns this scratch area, else None
    # Which of the workspace's regions holds it (index into MemoryPlan.regions); 0 unless the
    # workspace is split across several memory regions (compiler/workspace_split.py).
    region: int = 0
    row_tensor: int | None = None  # a row-streamed region's row buffer: the tensor it holds
    sums_op: int | None = None  # the partial sums of a FULLY_CONNECTED ending such a region

    def overlaps_in_time(self, other: "Buffer") -> bool:
        return self.first_op <= other.last_op and other.first_op <= self.last_op


@dataclass(frozen=True)
class Location:
    """Where a run-time tensor's bytes are in the workspace (``region``: which part of a
    workspace split across memory regions; 0, the part passed as ``workspace``, otherwise)."""

    offset: int
    region: int = 0


@dataclass
class MemoryPlan:
    buffers: list[Buffer]
    workspace_bytes: int
    locations: dict[int, Location]  # every non-constant tensor used by the graph
    strategy: str = ""  # the ordering/fit combination that won
    aliases: list[tuple[int, int, int]] = field(default_factory=list)  # (op, input, output) shared
    in_place: list[tuple[int, int, int]] = field(default_factory=list)  # (op, input, output) shared
    # (op, input, output, distance, pixel bytes): the output starts at least ``distance`` bytes
    # below the input (a multiple of ``pixel bytes`` when not 0) and may overlap it.
    overlaps: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    # Variable tensors (state kept between invocations) live in the model's state buffer, not the
    # workspace: tensor -> offset in it, and its size.
    state_locations: dict[int, Location] = field(default_factory=dict)
    state_bytes: int = 0
    # For re-planning a subset of the buffers (compiler/workspace_split.py): the overlaps the
    # placement may use, by buffer index, and every overlap claim before placement.
    pairs: dict = field(default_factory=dict, repr=False)
    claims: list = field(default_factory=list, repr=False)
    # A workspace split across memory regions: (region name, bytes) per part, in the board's
    # order of preference; ``workspace_bytes`` is then the first part's. Empty: one workspace.
    regions: list[tuple[str, int]] = field(default_factory=list)
    # A row-streamed run of ops (microbuild/compiler/row_stream.py), or None: its ops run in
    # bands, its internal tensors live in row buffers (row_locations) and its ops share one
    # scratch area (the first op's).
    row_region: "RowRegion | None" = None
    row_locations: dict[int, Location] = field(default_factory=dict)
    sums_locations: dict[int, Location] = field(default_factory=dict)  # op -> its partial sums
    op_by_op_bytes: int | None = None  # the workspace without the region (set by row_stream)

    def scratch_offset(self, op_index: int) -> int | None:
        buffer = self.scratch_buffer(op_index)
        return buffer.offset if buffer is not None else None

    def scratch_buffer(self, op_index: int) -> Buffer | None:
        if self.row_region is not None and op_index in self.row_region.ops:
            op_index = self.row_region.first
        for b in self.buffers:
            if b.scratch_op == op_index:
                return b
        return None

    def summary(self) -> list[dict]:
        entries = [{"label": b.label, "tensors": list(b.tensors), "offset": b.offset,
                    "size": b.size, "first_op": b.first_op, "last_op": b.last_op,
                    "scratch_op": b.scratch_op,
                    **({"row_tensor": b.row_tensor} if b.row_tensor is not None else {})}
                   for b in self.buffers]
        if self.regions:  # a split workspace: which part each buffer is in
            for entry, b in zip(entries, self.buffers):
                entry["region"] = self.regions[b.region][0]
        return entries

    def flattened(self) -> "MemoryPlan":
        """A split plan as one workspace, its parts one after the other (each part's offsets
        shifted by the bytes of the parts before it): valid exactly when every part is, so the
        single-workspace checks (plan_check.verify_plan) apply. An unsplit plan as it is."""
        if not self.regions:
            return self
        starts = [0]
        for _, size in self.regions[:-1]:
            starts.append(starts[-1] + align(size))
        buffers = [Buffer(b.label, b.tensors, b.size, b.first_op, b.last_op,
                          starts[b.region] + b.offset, b.scratch_op) for b in self.buffers]
        locations = {t: Location(starts[loc.region] + loc.offset)
                     for t, loc in self.locations.items()}
        return MemoryPlan(buffers=buffers,
                          workspace_bytes=starts[-1] + self.regions[-1][1],
                          locations=locations, strategy=self.strategy, aliases=self.aliases,
                          in_place=self.in_place, overlaps=self.overlaps,
                          state_locations=self.state_locations, state_bytes=self.state_bytes)


class _Groups:
    """Union-find over tensor indices: tensors in one group share one set of bytes."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, t: int) -> int:
        self.parent.setdefault(t, t)
        while self.parent[t] != t:
            self.parent[t] = self.parent[self.parent[t]]
            t = self.parent[t]
        return t

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def members(self, t: int) -> list[int]:
        root = self.find(t)
        return sorted(x for x in list(self.parent) if self.find(x) == root)


def _lifetimes(graph: Graph) -> dict[int, tuple[int, int]]:
    """(first op, last op) of every non-constant tensor the run touches. Graph inputs are written
    by the caller before op 0 and graph outputs read after the last op, so their lifetimes reach
    the start and the end of the run."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for op in graph.operators:
        for t in op.inputs + op.outputs:
            if t < 0 or graph.tensors[t].is_constant or graph.tensors[t].is_variable:
                continue
            first.setdefault(t, op.index)
            last[t] = op.index
    end = max(len(graph.operators) - 1, 0)
    for t in graph.inputs:
        first[t] = 0
        last.setdefault(t, 0)
    for t in graph.outputs:
        first.setdefault(t, 0)
        last[t] = end
    return {t: (first[t], last[t]) for t in first}


def plan_memory(graph: Graph, lowerings: Sequence[OpLowering], share: bool = True,
                orderings: Sequence[str] | None = None,
                fits: Sequence[str] = ("first", "best"), overlap: bool = True,
                region: RowRegion | None = None) -> MemoryPlan:
    """Place every intermediate tensor and scratch area; ``lowerings[i]`` belongs to op ``i``.

    ``share=False`` turns off RESHAPE aliasing and in-place reuse; with ``orderings=("size",)``
    and ``fits=("first",)`` that is TFLM's greedy-by-size planner (the tests' baseline).
    ``overlap=False`` keeps every output apart from the inputs it consumes (the plan before
    outputs could be written over their inputs: benchmarks/memory.py's "before").

    ``region``: a row-streamed region (microbuild/compiler/row_stream.py). Its ops' calls
    interleave, so every tensor alive at one of them is alive across all of them; the tensors it
    keeps in row buffers get a buffer of their rows instead; its ops share one scratch area (the
    largest they need: a kernel keeps nothing in it from one call to the next); and nothing is
    written in place or over its input there.
    """
    lifetimes = _lifetimes(graph)
    streamed: set[int] = set(region.ops) if region is not None else set()
    if region is not None:
        for t in region.capacity:
            del lifetimes[t]
        for t, (first, last) in lifetimes.items():
            if first <= region.last and region.first <= last:
                lifetimes[t] = (min(first, region.first), max(last, region.last))
    groups = _Groups()
    for t in lifetimes:
        groups.find(t)

    aliases: list[tuple[int, int, int]] = []
    in_place: list[tuple[int, int, int]] = []
    if share:
        for op, lowering in zip(graph.operators, lowerings):
            if not op.inputs or not op.outputs or op.index in streamed:
                continue
            dst = op.outputs[0]
            if lowering.aliases_input(op, graph):
                k: int | None = 0
            else:
                k = lowering.in_place_input(op, graph)
            if k is None or not 0 <= k < len(op.inputs) or op.inputs[k] < 0:
                continue
            src = op.inputs[k]
            if graph.tensors[src].is_constant or groups.find(src) == groups.find(dst):
                continue
            if graph.tensors[src].nbytes != graph.tensors[dst].nbytes:
                continue
            if lowering.aliases_input(op, graph):
                groups.union(src, dst)
                aliases.append((op.index, src, dst))
            else:
                src_group = groups.members(src)
                # A graph output is read after the run, even when this is the last op.
                dies_here = (max(lifetimes[t][1] for t in src_group) == op.index
                             and not any(t in graph.outputs for t in src_group))
                # Another input reading the same bytes through a different tensor (e.g. a
                # reshaped copy) could be read after it is overwritten: only the same tensor is
                # safe.
                others_clash = any(t >= 0 and t != src and groups.find(t) == groups.find(src)
                                   for j, t in enumerate(op.inputs) if j != k)
                if dies_here and not others_clash:
                    groups.union(src, dst)
                    in_place.append((op.index, src, dst))

    buffers: list[Buffer] = []
    seen_roots: set[int] = set()
    for t in sorted(lifetimes):
        root = groups.find(t)
        if root in seen_roots:
            continue
        seen_roots.add(root)
        members = groups.members(t)
        live = [lifetimes[m] for m in members]
        buffers.append(Buffer(label=", ".join(graph.tensors[m].name for m in members),
                              tensors=tuple(members),
                              size=max(graph.tensors[m].nbytes for m in members),
                              first_op=min(f for f, _ in live),
                              last_op=max(last for _, last in live)))

    for op, lowering in zip(graph.operators, lowerings):
        scratch = lowering.scratch_bytes(op, graph)
        if scratch > 0 and op.index not in streamed:
            buffers.append(Buffer(label=f"op {op.index} {op.opcode} scratch", tensors=(),
                                  size=scratch, first_op=op.index, last_op=op.index,
                                  scratch_op=op.index))
    if region is not None:
        for t in sorted(region.capacity):
            buffers.append(Buffer(
                label=f"{graph.tensors[t].name} ({region.capacity[t]} of "
                      f"{graph.tensors[t].shape[1]} rows)", tensors=(),
                size=region.row_buffer_bytes(t), first_op=region.first, last_op=region.last,
                row_tensor=t))
        for i, size in sorted(region.partial_sums().items()):
            buffers.append(Buffer(label=f"op {i} FULLY_CONNECTED partial sums", tensors=(),
                                  size=size, first_op=region.first, last_op=region.last,
                                  sums_op=i))
        shared_scratch = max((lowerings[i].scratch_bytes(graph.operators[i], graph)
                              for i in region.ops), default=0)
        if shared_scratch > 0:
            buffers.append(Buffer(
                label=f"ops {region.first}-{region.last} streamed scratch", tensors=(),
                size=shared_scratch, first_op=region.first, last_op=region.last,
                scratch_op=region.first))

    pairs, claims = (_overlaps(graph, lowerings, buffers, streamed) if share and overlap
                     else ({}, []))
    workspace, strategy = _place(buffers, orderings or tuple(_ORDERINGS), fits, pairs,
                                 chain=share)
    locations = {m: Location(b.offset) for b in buffers for m in b.tensors}
    row_locations = {b.row_tensor: Location(b.offset) for b in buffers
                     if b.row_tensor is not None}
    sums_locations = {b.sums_op: Location(b.offset) for b in buffers if b.sums_op is not None}
    # Only the overlaps the placement used are claims: the others were placed apart.
    overlaps = [c for c in claims if _bytes_overlap(locations, graph, c[1], c[2])]
    state_locations, state_bytes = plan_state(graph)
    return MemoryPlan(buffers=buffers, workspace_bytes=workspace, locations=locations,
                      strategy=strategy, aliases=aliases, in_place=in_place, overlaps=overlaps,
                      state_locations=state_locations, state_bytes=state_bytes, pairs=pairs,
                      claims=claims, row_region=region, row_locations=row_locations,
                      sums_locations=sums_locations)


def place_buffers(buffers: list[Buffer], pairs: _Pairs) -> tuple[int, str]:
    """Place ``buffers`` (setting their offsets) with every strategy plan_memory tries, keeping
    the smallest; ``pairs`` index into ``buffers``. Returns (bytes, strategy). For planning one
    part of a workspace split across memory regions (compiler/workspace_split.py)."""
    return _place(buffers, tuple(_ORDERINGS), ("first", "best"), pairs, chain=True)


def _bytes_overlap(locations: dict[int, Location], graph: Graph, a: int, b: int) -> bool:
    sa, sb = locations[a].offset, locations[b].offset
    return sa < sb + graph.tensors[b].nbytes and sb < sa + graph.tensors[a].nbytes


# (output buffer, input buffer) -> (smallest distance, exact): the output may start ``distance``
# bytes below the input and overlap it; ``exact``: only exactly that far (whole pixels).
_Pairs = dict[tuple[int, int], tuple[int, bool]]


def _overlaps(graph: Graph, lowerings: Sequence[OpLowering], buffers: list[Buffer],
              streamed: set[int] = frozenset()
              ) -> tuple[_Pairs, list[tuple[int, int, int, int, int]]]:
    """Every (op, input) whose output may overlap that input: the input's buffer dies at the op
    (no graph output among its tensors), the output's buffer starts there, and no other input of
    the op reads the same bytes."""
    buffer_of = {t: i for i, b in enumerate(buffers) for t in b.tensors}
    pairs: _Pairs = {}
    claims = []
    for op, lowering in zip(graph.operators, lowerings):
        if len(op.outputs) != 1 or op.outputs[0] not in buffer_of or op.index in streamed:
            continue
        dst = op.outputs[0]
        out_buffer = buffer_of[dst]
        if buffers[out_buffer].first_op != op.index:
            continue
        for k, src in enumerate(op.inputs):
            if src < 0 or src not in buffer_of:
                continue
            in_buffer = buffer_of[src]
            b = buffers[in_buffer]
            if in_buffer == out_buffer or b.last_op != op.index or \
                    any(t in graph.outputs for t in b.tensors):
                continue
            if any(t >= 0 and j != k and buffer_of.get(t) == in_buffer
                   for j, t in enumerate(op.inputs)):
                continue
            rule: Overlap | None = lowering.overlap(op, graph, k)
            if rule is None:
                continue
            if rule.pixel_bytes:
                step = math.lcm(rule.pixel_bytes, ALIGNMENT)
                distance, exact = -(-rule.distance // step) * step, True
            else:
                distance, exact = align(rule.distance), False
            if distance >= align(buffers[out_buffer].size):
                continue  # no byte to share
            pairs[(out_buffer, in_buffer)] = (distance, exact)
            claims.append((op.index, src, dst, rule.distance, rule.pixel_bytes))
    return pairs, claims


def plan_state(graph: Graph) -> tuple[dict[int, Location], int]:
    """Every variable tensor an operator uses, one after the other (16-byte aligned) in the
    model's state buffer, which lives as long as the application: what an operator writes there
    is what it reads on the next invocation."""
    offsets: dict[int, Location] = {}
    size = 0
    for op in graph.operators:
        for t in op.inputs + op.outputs:
            if t >= 0 and graph.tensors[t].is_variable and t not in offsets:
                offsets[t] = Location(size)
                size = align(size + graph.tensors[t].nbytes)
    return offsets, size


# Sort keys; ties fall back to the buffer's position so plans are deterministic.
_ORDERINGS: dict[str, Callable[[Buffer], tuple]] = {
    "size": lambda b: (-align(b.size),),
    "lifetime": lambda b: (-(b.last_op - b.first_op), -align(b.size)),
    "first_use": lambda b: (b.first_op, -align(b.size)),
    "size_x_lifetime": lambda b: (-align(b.size) * (b.last_op - b.first_op + 1),),
}


def _place(buffers: list[Buffer], orderings: Sequence[str], fits: Sequence[str],
           pairs: _Pairs | None = None, chain: bool = False) -> tuple[int, str]:
    """Try every ordering x fit (and the execution-order walk when ``chain``), apply the
    smallest; returns (workspace bytes, strategy name)."""
    if not buffers:
        return 0, "empty"
    pairs = pairs or {}
    best: tuple[int, str, list[int]] | None = None

    def consider(offsets: list[int], name: str) -> None:
        nonlocal best
        total = max(offsets[i] + align(buffers[i].size) for i in range(len(buffers)))
        if best is None or total < best[0]:
            best = (total, name, offsets)

    for ordering in orderings:
        key = _ORDERINGS[ordering]
        order = sorted(range(len(buffers)), key=lambda i: (key(buffers[i]), i))
        for fit in fits:
            consider(_fit(buffers, order, fit, pairs), f"{ordering}/{fit}-fit")
    if chain and pairs:
        walks = {"execution": lambda b: (b.first_op, -align(b.size)), **_ORDERINGS}
        for name, key in walks.items():
            order = sorted(range(len(buffers)), key=lambda i: (key(buffers[i]), i))
            # A wider search where it is cheap (small graphs), a greedy walk on large ones.
            walked = _walk(buffers, pairs, order, beam=8 if len(buffers) <= 80 else 1)
            consider(walked, f"{name} walk")
            consider(_pack(buffers, walked, pairs), f"{name} walk, packed")
    assert best is not None
    for b, off in zip(buffers, best[2]):
        b.offset = off
    return best[0], best[1]


def _forbidden(buffers: list[Buffer], i: int, j: int, at: int, pairs: _Pairs
               ) -> list[tuple[int, int]]:
    """Open intervals of offsets buffer ``i`` may not take while buffer ``j`` (alive at the same
    time) is at ``at``: it may not share a byte with it, except where an overlap is allowed."""
    si, sj = align(buffers[i].size), align(buffers[j].size)
    if (i, j) in pairs:  # i is the output, j the input it may overlap
        d, exact = pairs[(i, j)]
        return [(at - si, at - d), (at - d, at + sj)] if exact else [(at - d, at + sj)]
    if (j, i) in pairs:  # i is the input, j the output that may overlap it
        d, exact = pairs[(j, i)]
        return [(at - si, at + d), (at + d, at + sj)] if exact else [(at - si, at + d)]
    return [(at - si, at + sj)]


def _intervals(buffers: list[Buffer], i: int, placed: list[int], offsets: list[int],
               pairs: _Pairs) -> list[tuple[int, int]]:
    found = []
    for j in placed:
        if buffers[i].overlaps_in_time(buffers[j]):
            found += [(lo, hi) for lo, hi in _forbidden(buffers, i, j, offsets[j], pairs)
                      if lo < hi]
    return found


def _valid(c: int, intervals: list[tuple[int, int]]) -> bool:
    return all(c <= lo or c >= hi for lo, hi in intervals)


def _fit(buffers: list[Buffer], order: list[int], fit: str, pairs: _Pairs | None = None
         ) -> list[int]:
    """Place buffers in ``order`` at the lowest free offset (first fit) or in the tightest hole
    (best fit; the top of the workspace only when no hole fits)."""
    pairs = pairs or {}
    offsets = [0] * len(buffers)
    placed: list[int] = []
    for i in order:
        intervals = _intervals(buffers, i, placed, offsets, pairs)
        candidates = sorted({0} | {hi for _, hi in intervals if hi > 0})
        valid = [c for c in candidates if _valid(c, intervals)]
        if fit == "first":
            offsets[i] = valid[0]
        else:
            def room(c: int) -> float:
                above = [lo for lo, _ in intervals if lo >= c]
                return min(above) - c if above else math.inf
            offsets[i] = min(valid, key=lambda c: (room(c), c))
        placed.append(i)
    return offsets


def _walk(buffers: list[Buffer], pairs: _Pairs, order: list[int], beam: int = 1) -> list[int]:
    """Place buffers in ``order``, each where the workspace grows least, allowing offsets below
    everything placed so far (then all is shifted up): an output that may overlap its input just
    below it goes there even when the input was placed first at the bottom, so a chain of such
    ops costs its largest pair, not its two largest tensors. With ``beam`` > 1 the ``beam``
    cheapest partial placements are kept at each step (overlapping now can cost more later)."""
    # A state: (span, low, high, offsets of the buffers placed so far).
    states: list[tuple[int, int, int, list[int]]] = [(0, 0, 0, [0] * len(buffers))]
    placed: list[int] = []
    for i in order:
        size = align(buffers[i].size)
        grown = []
        for _, low, high, offsets in states:
            intervals = _intervals(buffers, i, placed, offsets, pairs)
            if not placed:
                valid = [0]
            else:
                candidates = {low, high - size} | {hi for _, hi in intervals} | \
                    {lo for lo, _ in intervals}
                valid = [c for c in candidates if _valid(c, intervals)]
            costs = sorted((max(high, c + size) - min(low, c), c < low, c) for c in valid)
            for span, _, c in costs[:beam]:
                new = list(offsets)
                new[i] = c
                lo_hi = (min(low, c), max(high, c + size)) if placed else (c, c + size)
                grown.append((span, lo_hi[0], lo_hi[1], new))
        grown.sort(key=lambda st: (st[0], st[1] > 0))
        states, seen = [], set()
        for st in grown:  # the cheapest distinct placements
            key = tuple(st[3][j] - st[1] for j in placed + [i])
            if key not in seen:
                seen.add(key)
                states.append(st)
            if len(states) == beam:
                break
        placed.append(i)
    _, low, _, offsets = states[0]
    return [o - low for o in offsets]


def _pack(buffers: list[Buffer], offsets: list[int], pairs: _Pairs) -> list[int]:
    """Move every buffer as low as it goes, lowest first: a valid placement stays valid (each
    buffer's old offset is still free when its turn comes) and never grows."""
    order = sorted(range(len(buffers)), key=lambda i: (offsets[i], -buffers[i].first_op, i))
    return _fit(buffers, order, "first", pairs)


def plan_with_streaming(graph: Graph, lowerings: Sequence, op_by_op):
    """The cheapest of ``op_by_op`` (the planner's MemoryPlan without a region) and the plans of
    every region row_stream can build, by ``row_stream.region_cost``: workspace bytes plus the
    instructions the region's band calls and row moves add, so a region saving few bytes for
    many calls is not kept; ties keep op-by-op execution. The region found best at one row per
    call is then tried with taller bands (``BAND_ROWS_TRIED``). The returned plan's
    ``op_by_op_bytes`` records the op-by-op workspace for the reports.

    Only regions holding an op where op-by-op execution peaks are tried: the workspace is at
    least what is alive at such an op, and a region elsewhere leaves that unchanged."""
    names = [lw.variant.name if getattr(lw, "variant", None) is not None else None
             for lw in lowerings]
    rows = streamable_ops(graph, names)
    rows.update(streamable_ops(graph, names, row_stream_fc.geometry))  # an FC ending a region
    live = live_bytes(op_by_op.summary(), len(graph.operators))
    peaks = [i for i, b in enumerate(live) if b == max(live, default=0)]
    spans = sorted({span for peak in peaks for span in candidate_spans(rows, peak)})
    best, best_cost = op_by_op, region_cost(op_by_op.workspace_bytes, None)

    def consider(first: int, last: int, band_rows: int) -> None:
        nonlocal best, best_cost
        region = build_region(graph, first, last, rows, band_rows)
        if region is None:
            return
        plan = plan_memory(graph, lowerings, region=region)
        cost = region_cost(plan.workspace_bytes, region)
        if cost < best_cost:
            best, best_cost = plan, cost

    for first, last in spans:
        consider(first, last, 1)
    if best.row_region is not None:
        first, last = best.row_region.first, best.row_region.last
        for band_rows in BAND_ROWS_TRIED:
            consider(first, last, band_rows)
    best.op_by_op_bytes = op_by_op.workspace_bytes
    return best
