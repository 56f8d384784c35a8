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

Placement tries several orderings (size, lifetime length, first use, size x lifetime) with
first-fit and best-fit, and keeps the smallest workspace: TFLM's planner is one of these
combinations (greedy by size, first fit) without the sharing above, so the result is never larger.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from microbuild.compiler.ops.base import OpLowering
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

    def overlaps_in_time(self, other: "Buffer") -> bool:
        return self.first_op <= other.last_op and other.first_op <= self.last_op


@dataclass(frozen=True)
class Location:
    """Where a run-time tensor's bytes are in the workspace."""

    offset: int


@dataclass
class MemoryPlan:
    buffers: list[Buffer]
    workspace_bytes: int
    locations: dict[int, Location]  # every non-constant tensor used by the graph
    strategy: str = ""  # the ordering/fit combination that won
    aliases: list[tuple[int, int, int]] = field(default_factory=list)  # (op, input, output) shared
    in_place: list[tuple[int, int, int]] = field(default_factory=list)  # (op, input, output) shared
    # Variable tensors (state kept between invocations) live in the model's state buffer, not the
    # workspace: tensor -> offset in it, and its size.
    state_locations: dict[int, Location] = field(default_factory=dict)
    state_bytes: int = 0

    def scratch_offset(self, op_index: int) -> int | None:
        for b in self.buffers:
            if b.scratch_op == op_index:
                return b.offset
        return None

    def summary(self) -> list[dict]:
        return [{"label": b.label, "tensors": list(b.tensors), "offset": b.offset, "size": b.size,
                 "first_op": b.first_op, "last_op": b.last_op, "scratch_op": b.scratch_op}
                for b in self.buffers]


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
                fits: Sequence[str] = ("first", "best")) -> MemoryPlan:
    """Place every intermediate tensor and scratch area; ``lowerings[i]`` belongs to op ``i``.

    ``share=False`` turns off RESHAPE aliasing and in-place reuse; with ``orderings=("size",)``
    and ``fits=("first",)`` that is TFLM's greedy-by-size planner (the tests' baseline).
    """
    lifetimes = _lifetimes(graph)
    groups = _Groups()
    for t in lifetimes:
        groups.find(t)

    aliases: list[tuple[int, int, int]] = []
    in_place: list[tuple[int, int, int]] = []
    if share:
        for op, lowering in zip(graph.operators, lowerings):
            if not op.inputs or not op.outputs:
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
        if scratch > 0:
            buffers.append(Buffer(label=f"op {op.index} {op.opcode} scratch", tensors=(),
                                  size=scratch, first_op=op.index, last_op=op.index,
                                  scratch_op=op.index))

    workspace, strategy = _place(buffers, orderings or tuple(_ORDERINGS), fits)
    locations = {m: Location(b.offset) for b in buffers for m in b.tensors}
    state_locations, state_bytes = plan_state(graph)
    return MemoryPlan(buffers=buffers, workspace_bytes=workspace, locations=locations,
                      strategy=strategy, aliases=aliases, in_place=in_place,
                      state_locations=state_locations, state_bytes=state_bytes)


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


def _place(buffers: list[Buffer], orderings: Sequence[str], fits: Sequence[str]) -> tuple[int, str]:
    """Try every ordering x fit, apply the smallest; returns (workspace bytes, strategy name)."""
    if not buffers:
        return 0, "empty"
    best: tuple[int, str, list[int]] | None = None
    for ordering in orderings:
        key = _ORDERINGS[ordering]
        order = sorted(range(len(buffers)), key=lambda i: (key(buffers[i]), i))
        for fit in fits:
            offsets = _fit(buffers, order, fit)
            total = max(offsets[i] + align(buffers[i].size) for i in range(len(buffers)))
            if best is None or total < best[0]:
                best = (total, f"{ordering}/{fit}-fit", offsets)
    assert best is not None
    for b, off in zip(buffers, best[2]):
        b.offset = off
    return best[0], best[1]


def _fit(buffers: list[Buffer], order: list[int], fit: str) -> list[int]:
    offsets = [0] * len(buffers)
    placed: list[int] = []
    for i in order:
        b = buffers[i]
        size = align(b.size)
        busy = sorted((offsets[j], offsets[j] + align(buffers[j].size)) for j in placed
                      if b.overlaps_in_time(buffers[j]))
        gaps = []  # (start, length) of every hole between live buffers
        cursor = 0
        for start, end in busy:
            if start - cursor >= size:
                gaps.append((cursor, start - cursor))
            cursor = max(cursor, end)
        if not gaps:
            offsets[i] = cursor
        elif fit == "first":
            offsets[i] = gaps[0][0]
        else:  # best fit: the tightest hole
            offsets[i] = min(gaps, key=lambda g: (g[1], g[0]))[0]
        placed.append(i)
    return offsets
