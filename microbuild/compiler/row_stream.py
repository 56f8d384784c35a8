"""Row-streamed regions: a run of consecutive convolutions executed a few output rows at a time.

Op-by-op execution cannot go below the bytes alive at its worst op: in ResNet-8 that is a
32x32x16 conv output next to the 32x32x16 residual it is added to. Executing the first layers
row by row (MCUNetV2's patch-based inference, cut into whole rows) removes that floor: a tensor
produced and consumed inside the region never exists whole, only the rows some consumer still
needs, in a small *row buffer*.

A region is consecutive ops ``first..last`` of kinds :data:`STREAMABLE` (CONV_2D, the fused
CONV_2D+ADD and DEPTHWISE_CONV_2D, int8, one image, no dilation). Each op computes output row
``y`` from input rows ``[y * stride - pad_top, ... + filter_h)`` clipped to the image (and, for
CONV_2D+ADD, residual row ``y``). The kernels take the height, the top padding and the output height through their
parameter struct, so a band of output rows ``[y0, y1)`` is one ordinary kernel call on a *view*:
the input pointer at the first row the band reads, ``input_h`` the rows it reads, ``pad_top``
what is left of the padding above them and ``output_h = y1 - y0``. Rows beyond the view's end
are either the image's bottom padding or rows the band does not read, so every kernel variant
(which all clip their windows to ``input_h``) computes exactly the op-by-op values, and keeps
nothing from one call to the next: the region's ops share one scratch area.

Tensors:
- *full*: produced before the region (its inputs) or read after it or a graph output: the whole
  tensor, as op by op, alive across the whole region;
- *rows*: produced and consumed inside the region: a buffer of ``capacity`` rows holding rows
  ``[base, base + capacity)``; when the producer's next row does not fit, the rows still needed
  move to the buffer's start (a ``memmove``; the kernels want contiguous views, not rings).

The order of the calls is decided here at compile time, demand-driven: the last op's rows in
order, each first pulling the rows of its inputs it needs from their producers (recursively),
then whatever rows remain. A first pass with unbounded buffers measures each buffer's capacity
(the most rows ever needed at once), a second one records the moves. Consecutive calls of one
op with nothing between them become one band.

Where it is used: ``planner.plan_with_streaming`` keeps a region only when the planner
(``plan_memory(region=...)``) places it in a smaller workspace than op by op; codegen emits each
band shape of an op as a small function and the region as one function of calls and moves;
``plan_check.verify_plan`` replays the schedule independently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from microbuild.compiler.fusion import FUSED_CONV_ADD
from microbuild.compiler.spatial import window_2d
from microbuild.model.ir import Graph, Operator

STREAMABLE = ("CONV_2D", FUSED_CONV_ADD, "DEPTHWISE_CONV_2D")
# Kernel variants whose calls keep nothing between calls and clip windows to input_h
# (None: the reference kernel). The DSP depthwise kernel's band ring lives in its scratch and is
# refilled from the view at the start of every call.
_STREAMABLE_VARIANTS = {
    "CONV_2D": (None, "gemm", "dsp", "dsp16", "mve"),
    FUSED_CONV_ADD: (None, "gemm", "dsp", "dsp16", "mve"),
    "DEPTHWISE_CONV_2D": (None, "portable", "dsp", "mve"),
}


@dataclass(frozen=True)
class RowGeometry:
    """How one op's output rows map onto its input rows."""

    op: int
    x: int  # the windowed input tensor
    residual: int | None  # CONV_2D+ADD's row-aligned operand, else None
    out: int
    in_h: int
    out_h: int
    stride: int
    pad_top: int
    filter_h: int
    # A FULLY_CONNECTED consuming rows (row_stream_fc.py): the bytes of its int32 partial sums,
    # kept across the region; its output is written whole by its last band. 0 for convolutions.
    sums_bytes: int = 0

    def rows_read(self, y0: int, y1: int) -> tuple[int, int]:
        """Input rows ``[v0, v1)`` that output rows ``[y0, y1)`` read."""
        v0 = max(0, y0 * self.stride - self.pad_top)
        v1 = min(self.in_h, (y1 - 1) * self.stride - self.pad_top + self.filter_h)
        return v0, max(v1, v0)

    def first_row_needed(self, y: int) -> int:
        return max(0, y * self.stride - self.pad_top)


@dataclass(frozen=True)
class RowBand:
    """What a band call changes in an op's kernel parameters (the conv lowerings read it from
    the emit context's ``band``)."""

    input_h: int
    output_h: int
    pad_top: int


@dataclass(frozen=True)
class Call:
    """One kernel call: output rows ``[y0, y1)`` of ``op``, its input view ``[v0, v1)`` with
    ``pad_top`` rows of padding above it, and where each operand's first row is: tensor ->
    row slot in its buffer (a full tensor's slot is the row itself)."""

    op: int
    y0: int
    y1: int
    v0: int
    v1: int
    pad_top: int
    slots: tuple[tuple[int, int], ...]  # (tensor, slot)


@dataclass(frozen=True)
class Shift:
    """Move ``rows`` rows of ``tensor``'s row buffer from slot ``source`` to slot 0."""

    tensor: int
    source: int
    rows: int


@dataclass
class RowRegion:
    first: int
    last: int
    geometry: dict[int, RowGeometry]  # op -> rows
    row_bytes: dict[int, int]  # every tensor of the region -> bytes per row
    capacity: dict[int, int]  # row-buffer tensors -> rows held
    steps: list = field(default_factory=list)  # Call and Shift, in order
    band_rows: int = 1  # output rows per call (build_region)

    @property
    def ops(self) -> range:
        return range(self.first, self.last + 1)

    def row_buffer_bytes(self, t: int) -> int:
        return self.capacity[t] * self.row_bytes[t]

    def partial_sums(self) -> dict[int, int]:
        """Op -> bytes of the partial sums a FULLY_CONNECTED consuming rows keeps (row_stream_fc)."""
        return {i: g.sums_bytes for i, g in self.geometry.items() if g.sums_bytes}

    def calls(self) -> list[Call]:
        return [s for s in self.steps if isinstance(s, Call)]

    def summary(self) -> dict:
        return {"ops": [self.first, self.last],
                "row_buffers": [{"tensor": t, "rows": self.capacity[t],
                                 "row_bytes": self.row_bytes[t],
                                 "bytes": self.row_buffer_bytes(t)}
                                for t in sorted(self.capacity)],
                "band_rows": self.band_rows,
                "calls": len(self.calls()),
                "row_moves": sum(1 for s in self.steps if isinstance(s, Shift))}


# What a region costs in instructions, per inference, beyond running its ops whole: each band
# call repeats the kernel's per-call setup (parameter struct, per-call constants, loop
# prologues) and computes its rows' ragged ends (a row of 5 pixels leaves 1 outside a 4-pixel
# block, 125 pixels whole leave 1 in all); each row move copies its bytes (a load and a store
# per word). Calibrated on ds_cnn and resnet8 on mps3-an547 (`run --profile` with and without
# --no-row-stream: 67,687 instructions for 74 calls and 14,080 bytes moved; about 100,000 for
# 143 calls and 94,208 bytes).
CALL_INSTRUCTIONS = 600
MOVE_INSTRUCTIONS_PER_BYTE = 0.5
# A region is worth its instructions when it saves at least one byte of workspace per this many
# instructions it adds: ds_cnn's first region (704 bytes for ~68,000 instructions, 1 per 96) is
# not, ResNet-8's (13,248 for ~100,000, 1 per 8) and person_detect's (13,872 for ~61,000) are.
INSTRUCTIONS_PER_BYTE_SAVED = 32
# Band heights tried for the region chosen at one row per call: taller bands cut calls and
# moves for larger row buffers.
BAND_ROWS_TRIED = (2, 4)


def added_instructions(region: "RowRegion") -> float:
    """The instructions ``region`` adds per inference to running its ops whole (estimated:
    calls and bytes moved, see CALL_INSTRUCTIONS)."""
    moved = sum(s.rows * region.row_bytes[s.tensor] for s in region.steps
                if isinstance(s, Shift) and s.rows > 0 and s.source > 0)
    return len(region.calls()) * CALL_INSTRUCTIONS + moved * MOVE_INSTRUCTIONS_PER_BYTE


def region_cost(workspace_bytes: int, region: "RowRegion | None") -> float:
    """Workspace bytes plus the region's added instructions, in bytes at
    INSTRUCTIONS_PER_BYTE_SAVED: the planner keeps the plan for which this is lowest."""
    if region is None:
        return float(workspace_bytes)
    return workspace_bytes + added_instructions(region) / INSTRUCTIONS_PER_BYTE_SAVED


def geometry(op: Operator, graph: Graph, variant_name: str | None) -> RowGeometry | None:
    """The op's row mapping, or None when it cannot run in bands."""
    if op.opcode not in STREAMABLE or variant_name not in _STREAMABLE_VARIANTS[op.opcode]:
        return None
    conv = op.options["conv"] if op.opcode == FUSED_CONV_ADD else op
    if len(op.outputs) != 1 or not conv.inputs or conv.inputs[0] < 0:
        return None
    x, w, out = graph.tensor(conv.inputs[0]), graph.tensor(conv.inputs[1]), \
        graph.tensor(op.outputs[0])
    o = conv.options
    if x.dtype != "int8" or len(x.shape) != 4 or len(out.shape) != 4 or x.shape[0] != 1 \
            or w.data is None or len(w.shape) != 4:
        return None
    if o.get("dilation_h_factor", 1) != 1 or o.get("dilation_w_factor", 1) != 1:
        return None
    in_h = int(x.shape[1])
    filter_h = int(w.shape[1])
    win = window_2d(o, in_h, int(x.shape[2]), filter_h, int(w.shape[2]))
    if win.out_h != int(out.shape[1]):
        return None
    residual = op.inputs[-1] if op.opcode == FUSED_CONV_ADD else None
    return RowGeometry(op=op.index, x=conv.inputs[0], residual=residual, out=op.outputs[0],
                       in_h=in_h, out_h=win.out_h, stride=int(o.get("stride_h", 1)),
                       pad_top=win.pad_top, filter_h=filter_h)


def streamable_ops(graph: Graph, variant_names: Sequence[str | None],
                   geometry_of=geometry) -> dict[int, RowGeometry]:
    """The ops ``geometry_of`` (this module's, or row_stream_fc's) maps onto rows, by index."""
    found = {}
    for op, name in zip(graph.operators, variant_names):
        g = geometry_of(op, graph, name)
        if g is not None:
            found[op.index] = g
    return found


def candidate_spans(streamable: dict[int, RowGeometry], around: int | None = None
                    ) -> list[tuple[int, int]]:
    """Every run of 2 or more consecutive streamable ops (containing op ``around`` if given)."""
    spans = []
    for first in sorted(streamable):
        last = first
        while last + 1 in streamable:
            last += 1
            if around is None or first <= around <= last:
                spans.append((first, last))
    return spans


def build_region(graph: Graph, first: int, last: int, rows: dict[int, RowGeometry],
                 band_rows: int = 1) -> RowRegion | None:
    """The region of ops ``first..last`` with its row buffers and its schedule, or None when a
    tensor of it cannot be cut in rows (a residual of another shape, a reshaped view...).

    ``band_rows``: output rows each op computes per call (its last band may be shorter). Taller
    bands mean fewer calls (each repeats the kernel's per-call setup) and fewer row moves, for
    row buffers about ``band_rows - 1`` rows larger each: :func:`added_instructions` and the
    planner weigh the two."""
    ops = range(first, last + 1)
    geo = {i: rows[i] for i in ops}
    producer = {g.out: i for i, g in geo.items()}
    readers: dict[int, list[int]] = {}
    for op in graph.operators:
        for t in op.inputs:
            if t >= 0:
                readers.setdefault(t, []).append(op.index)
    row_bytes: dict[int, int] = {}
    if any(g.sums_bytes for i, g in geo.items() if i != last):
        return None  # a FULLY_CONNECTED's output has no rows to stream on: it ends the region
    for g in geo.values():
        for t in (g.x, g.residual, g.out):
            if t is None:
                continue
            if t == g.out and g.sums_bytes:
                row_bytes[t] = 0  # every band call gets the whole output: the last one writes it
                continue
            tensor = graph.tensor(t)
            if len(tensor.shape) != 4 or tensor.shape[0] != 1:
                return None
            row_bytes[t] = tensor.nbytes // int(tensor.shape[1])
        # an op's input appearing twice (x as its own residual) cannot be cut apart
        if g.residual is not None and (g.residual == g.x or
                                       graph.tensor(g.residual).shape != graph.tensor(g.out).shape):
            return None
    # Rows tensors: produced inside, every reader inside, not a graph output, read only as the
    # windowed input or residual of region ops.
    internal = set()
    for t, p in producer.items():
        if t in graph.outputs or not readers.get(t):
            continue
        if all(r in geo and t in (geo[r].x, geo[r].residual) for r in readers[t]) and \
                all(r > p for r in readers[t]):
            internal.add(t)
    if not internal:
        return None
    region = RowRegion(first, last, geo, row_bytes, {}, band_rows=band_rows)
    capacity = _schedule(region, graph, producer, internal, None)
    region.capacity = capacity
    _schedule(region, graph, producer, internal, capacity)
    region.steps = _merge_bands(region.steps, region)
    return region


def _schedule(region: RowRegion, graph: Graph, producer: dict[int, int], internal: set[int],
              capacity: dict[int, int] | None) -> dict[int, int]:
    """Walk the demand-driven order. Without ``capacity``: measure the rows each row buffer must
    hold. With it: record the calls and moves in ``region.steps``."""
    geo = region.geometry
    next_row = {i: 0 for i in geo}  # each op's next output row
    base = {t: 0 for t in internal}  # the row in slot 0 of each row buffer
    needed = {t: 1 for t in internal}
    consumers = {t: [i for i, g in geo.items() if t in (g.x, g.residual)] for t in internal}
    steps: list = []

    def lowest_needed(t: int) -> int:
        lows = []
        for c in consumers[t]:
            g = geo[c]
            if next_row[c] >= g.out_h:
                continue
            lows.append(g.first_row_needed(next_row[c]) if t == g.x else next_row[c])
        return min(lows) if lows else next_row[producer[t]]

    def slot(t: int, row: int) -> int:
        return row - base[t] if t in internal else row

    band = region.band_rows

    def produce(i: int, upto: int) -> None:
        """Compute op ``i``'s output rows up to ``upto`` (rounded up to a whole band), a band
        per call, each first pulling the input rows the whole band reads."""
        g = geo[i]
        while next_row[i] < min(upto, g.out_h):
            y = next_row[i]
            y1 = min(y + band, g.out_h)
            v0, v1 = g.rows_read(y, y1)
            for t, needs in ((g.x, v1), (g.residual, y1)):
                if t is not None and t in producer and t in region.row_bytes:
                    produce(producer[t], needs)
            if g.out in internal:
                # (a row no consumer reads, e.g. between a 1x1 stride-2 conv's rows, is still
                # written: it needs a slot too)
                low = min(lowest_needed(g.out), y)
                needed[g.out] = max(needed[g.out], y1 - low)
                if capacity is not None and y1 - 1 - base[g.out] >= capacity[g.out]:
                    kept = y - low
                    steps.append(Shift(g.out, low - base[g.out], kept))
                    base[g.out] = low
            slots = [(g.x, slot(g.x, v0)), (g.out, slot(g.out, y))]
            if g.residual is not None:
                slots.append((g.residual, slot(g.residual, y)))
            steps.append(Call(i, y, y1, v0, v1, g.pad_top - y * g.stride + v0, tuple(slots)))
            next_row[i] = y1

    last = geo[region.last]
    for y in range(last.out_h):
        produce(region.last, y + 1)
    for i in region.ops:  # outputs read after the region
        produce(i, geo[i].out_h)
    if capacity is not None:
        region.steps = steps
    return needed


def _merge_bands(steps: list, region: RowRegion) -> list:
    """Consecutive calls of one op, nothing between them, as one band (rows stay contiguous)."""
    merged: list = []
    for s in steps:
        prev = merged[-1] if merged else None
        if isinstance(s, Call) and isinstance(prev, Call) and prev.op == s.op \
                and prev.y1 == s.y0:
            g = region.geometry[s.op]
            v0, v1 = g.rows_read(prev.y0, s.y1)
            merged[-1] = Call(s.op, prev.y0, s.y1, v0, v1, prev.pad_top, prev.slots)
            continue
        merged.append(s)
    return merged
