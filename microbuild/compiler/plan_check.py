"""Checking and drawing a memory plan, independently of how the planner made it.

``verify_plan`` recomputes every lifetime from the graph and checks the plan's claims: no two
tensors alive at the same op share bytes unless the plan says they may (a RESHAPE alias, an
in-place op) *and* that claim holds; everything lies inside the workspace; graph inputs stay intact
from the start of the run until their last reader and graph outputs from their producer to the end
of the run. It shares no code with the planner on purpose, so a planner bug cannot hide itself.

``plan_svg`` draws the plan: op index on x, workspace offset on y, one rectangle per buffer.
"""

from __future__ import annotations

from html import escape
from typing import Any, Sequence

from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.planner import MemoryPlan
from microbuild.units import kib
from microbuild.model.ir import Graph
from microbuild.compiler.row_stream import Call


def _tensor_lifetimes(graph: Graph) -> dict[int, tuple[int, int]]:
    """Ops during which each tensor's bytes must hold: a graph input is written before the run
    (so from op 0), a graph output is read after it (so to the last op)."""
    n = len(graph.operators)
    spans: dict[int, list[int]] = {}
    for op in graph.operators:
        for t in list(op.inputs) + list(op.outputs):
            if t >= 0 and not graph.tensors[t].is_constant and not graph.tensors[t].is_variable:
                spans.setdefault(t, []).append(op.index)
    for t in graph.inputs:
        spans.setdefault(t, []).append(0)
    for t in graph.outputs:
        spans.setdefault(t, []).append(max(n - 1, 0))
    return {t: (min(ops), max(ops)) for t, ops in spans.items()}


def verify_plan(graph: Graph, plan: MemoryPlan, lowerings: Sequence[Any] | None = None
                ) -> list[str]:
    """Every problem found in ``plan`` for ``graph``; an empty list means the plan is sound.
    A workspace split across memory regions is checked as its parts laid end to end.
    ``lowerings``: the ones the plan was made with (each op's kernel variant); without them, the
    reference kernels' needs."""
    plan = plan.flattened()
    problems: list[str] = []
    lifetimes = _tensor_lifetimes(graph)
    region = plan.row_region
    if region is not None:
        # A row-streamed region interleaves its ops' calls: whatever is alive at one of them is
        # alive across all; its row tensors are checked as row buffers (and the schedule that
        # fills them, below) instead of as whole tensors.
        problems += _check_region(graph, plan)
        for t in region.capacity:
            lifetimes.pop(t, None)
        for t, (first, last) in list(lifetimes.items()):
            if first <= region.last and region.first <= last:
                lifetimes[t] = (min(first, region.first), max(last, region.last))
    problems += _check_places(graph, plan, lifetimes)
    problems += _check_state(graph, plan)
    problems += _check_sharing_claims(graph, plan, lifetimes)
    shared = _UnionFind()  # tensors a claim lets share bytes
    for _, src, dst in list(plan.aliases) + list(plan.in_place):
        shared.union(src, dst)
    overlap_problems, may_overlap = _check_overlap_claims(graph, plan, lowerings, lifetimes,
                                                          shared)
    problems += overlap_problems
    problems += _check_disjoint(graph, plan, lowerings, lifetimes, shared, may_overlap)
    return problems


def _check_places(graph: Graph, plan: MemoryPlan, lifetimes: dict[int, tuple[int, int]]
                  ) -> list[str]:
    problems: list[str] = []
    locations = plan.locations
    # 1. Every run-time tensor has a place, aligned and inside the workspace.
    for t in lifetimes:
        loc = locations.get(t)
        if loc is None:
            problems.append(f"tensor {t} is used by the graph but has no location")
            continue
        end = loc.offset + graph.tensors[t].nbytes
        if loc.offset % 16:
            problems.append(f"tensor {t} at offset {loc.offset} is not 16-byte aligned")
        if loc.offset < 0 or end > plan.workspace_bytes:
            problems.append(f"tensor {t} [{loc.offset}, {end}) lies outside the workspace "
                            f"of {plan.workspace_bytes} bytes")
    return problems


def _check_state(graph: Graph, plan: MemoryPlan) -> list[str]:
    problems: list[str] = []
    ops = graph.operators
    # 1b. Every variable tensor has its own bytes in the state buffer (nothing else shares them:
    #     they must survive from one invocation to the next).
    state = sorted((loc.offset, loc.offset + graph.tensors[t].nbytes, t)
                   for t, loc in plan.state_locations.items())
    for t in {t for op in ops for t in op.inputs + op.outputs
              if t >= 0 and graph.tensors[t].is_variable}:
        if t not in plan.state_locations:
            problems.append(f"variable tensor {t} has no place in the state buffer")
    for (s0, e0, a), (s1, _, b) in zip(state, state[1:]):
        if s1 < e0:
            problems.append(f"variable tensors {a} and {b} overlap in the state buffer")
    if state and state[-1][1] > plan.state_bytes:
        problems.append(f"the state buffer of {plan.state_bytes} bytes is too small")
    return problems


def _check_sharing_claims(graph: Graph, plan: MemoryPlan, lifetimes: dict[int, tuple[int, int]]
                          ) -> list[str]:
    problems: list[str] = []
    locations = plan.locations
    ops = graph.operators
    # 2. Sharing claims: each must name the op's input 0 (alias) or the input its lowering lets it
    #    overwrite (in place) and output 0, an op that allows it, the same place and the same
    #    size.
    content = _UnionFind()  # tensors holding the same bytes because of an alias (same content)
    for op_index, src, dst in plan.aliases:
        op = ops[op_index]
        lowering = REGISTRY.get(op.opcode)
        if op.inputs[:1] != [src] or op.outputs[:1] != [dst]:
            problems.append(f"alias claim ({op_index}, {src}, {dst}) is not op {op_index}'s "
                            "input 0 -> output 0")
        elif lowering is None or not lowering.aliases_input(op, graph):
            problems.append(f"op {op_index} {op.opcode} cannot alias its input")
        if locations.get(src) != locations.get(dst):
            problems.append(f"alias claim ({op_index}, {src}, {dst}): the tensors are at "
                            f"different places")
        content.union(src, dst)
    for op_index, src, dst in plan.in_place:
        op = ops[op_index]
        lowering = REGISTRY.get(op.opcode)
        k = lowering.in_place_input(op, graph) if lowering is not None else None
        if k is None:
            problems.append(f"op {op_index} {op.opcode} cannot run in place")
            continue
        if not 0 <= k < len(op.inputs) or op.inputs[k] != src or op.outputs[:1] != [dst]:
            problems.append(f"in-place claim ({op_index}, {src}, {dst}) is not op {op_index}'s "
                            f"input {k} -> output 0")
            continue
        if locations.get(src) != locations.get(dst) or \
                graph.tensors[src].nbytes != graph.tensors[dst].nbytes:
            problems.append(f"in-place claim ({op_index}, {src}, {dst}): different place or size")
        # Overwriting src is only safe if nothing holding src's bytes is read after this op, and
        # no other input of the op reads them through another tensor.
        for t in content.members(src, lifetimes):
            if lifetimes[t][1] > op_index:
                problems.append(f"op {op_index} overwrites tensor {src} in place but tensor {t} "
                                f"(same bytes) is still read at op {lifetimes[t][1]}")
            elif t in graph.outputs:
                problems.append(f"op {op_index} overwrites tensor {src} in place but tensor {t} "
                                "(same bytes) is a graph output, still read after the run")
        for j, t in enumerate(op.inputs):
            if j != k and t >= 0 and t != src and content.find(t) == content.find(src):
                problems.append(f"op {op_index} overwrites tensor {src} in place while reading "
                                f"the same bytes as tensor {t}")
    return problems


def _check_overlap_claims(graph: Graph, plan: MemoryPlan, lowerings: Sequence[Any] | None,
                          lifetimes: dict[int, tuple[int, int]], shared: _UnionFind
                          ) -> tuple[list[str], set[frozenset]]:
    """The overlap claims' problems, and the pairs of sharing keys each sound claim lets
    overlap (for the disjointness check)."""
    problems: list[str] = []
    locations = plan.locations
    ops = graph.operators
    # 2b. Overlap claims: an op whose kernel walks its output pixels in order may write its
    #     output over an input it is the last reader of, starting at least the distance its
    #     lowering (for the kernel the plan was made with) asks below that input.
    may_overlap: set[frozenset] = set()
    for op_index, src, dst, _, _ in plan.overlaps:
        op = ops[op_index]
        lowering = lowerings[op_index] if lowerings is not None else REGISTRY.get(op.opcode)
        k = op.inputs.index(src) if src in op.inputs else None
        rule = lowering.overlap(op, graph, k) if lowering is not None and k is not None else None
        if rule is None or op.outputs != [dst]:
            problems.append(f"op {op_index} {op.opcode} may not write its output tensor {dst} "
                            f"over its input tensor {src}")
            continue
        if src not in locations or dst not in locations:
            continue  # reported above
        gap = locations[src].offset - locations[dst].offset
        if not rule.allows(gap):
            whole = f" (a multiple of {rule.pixel_bytes})" if rule.pixel_bytes else ""
            problems.append(f"op {op_index} {op.opcode} writes tensor {dst} {gap} bytes below "
                            f"its input tensor {src}; overlapping needs at least "
                            f"{rule.distance}{whole}")
        later = [t for t in lifetimes if shared.find(t) == shared.find(src)
                 and (lifetimes[t][1] > op_index or t in graph.outputs)]
        if later:
            problems.append(f"op {op_index} overwrites tensor {src} but tensor {later[0]} (same "
                            "bytes) is still read after it")
        earlier = [t for t in lifetimes if shared.find(t) == shared.find(dst)
                   and lifetimes[t][0] < op_index]
        if earlier:
            problems.append(f"op {op_index} writes tensor {dst} over tensor {src} but tensor "
                            f"{earlier[0]} (same bytes as {dst}) is alive before it")
        if any(j != k and t >= 0 and shared.find(t) == shared.find(src)
               for j, t in enumerate(op.inputs)):
            problems.append(f"op {op_index} overwrites tensor {src} while another of its inputs "
                            "reads the same bytes")
        may_overlap.add(frozenset({("t", shared.find(src)), ("t", shared.find(dst))}))
    return problems, may_overlap


def _check_disjoint(graph: Graph, plan: MemoryPlan, lowerings: Sequence[Any] | None,
                    lifetimes: dict[int, tuple[int, int]], shared: _UnionFind,
                    may_overlap: set[frozenset]) -> list[str]:
    problems: list[str] = []
    locations = plan.locations
    ops = graph.operators
    region = plan.row_region
    # 3. No two workspace regions alive at the same op overlap, except tensors sharing a buffer.
    regions = []  # (label, start, end, first op, last op, sharing key)
    for t, (first, last) in lifetimes.items():
        loc = locations.get(t)
        if loc is not None:
            regions.append((f"tensor {t}", loc.offset, loc.offset + graph.tensors[t].nbytes,
                            first, last, ("t", shared.find(t))))
    if region is not None:
        for t in region.capacity:
            loc = plan.row_locations.get(t)
            if loc is not None:
                regions.append((f"row buffer of tensor {t}", loc.offset,
                                loc.offset + region.row_buffer_bytes(t), region.first,
                                region.last, ("r", t)))
        for i, size in region.partial_sums().items():
            loc = plan.sums_locations.get(i)
            if loc is not None:
                regions.append((f"op {i} partial sums", loc.offset, loc.offset + size,
                                region.first, region.last, ("p", i)))
    for position, op in enumerate(ops):
        # The lowerings the plan was made with know each op's kernel variant (and its scratch);
        # without them, the reference kernels' needs, plus whatever scratch the plan holds.
        lowering = lowerings[position] if lowerings is not None else REGISTRY.get(op.opcode)
        need = lowering.scratch_bytes(op, graph) if lowering is not None else 0
        offset = plan.scratch_offset(op.index)
        owner = region.first if region is not None and op.index in region.ops else op.index
        size = next((b.size for b in plan.buffers if b.scratch_op == owner), 0)
        if owner != op.index:  # the region's shared scratch, checked once for all its ops
            if need > size:
                problems.append(f"op {op.index} {op.opcode} needs {need} scratch bytes, the "
                                f"region's shared scratch has {size}")
            continue
        first_op, last_op = ((region.first, region.last) if owner == op.index and
                             region is not None and op.index == region.first
                             else (op.index, op.index))
        if need <= 0 and size == 0:
            continue
        if offset is None or size < need:
            problems.append(f"op {op.index} {op.opcode} needs {need} scratch bytes, the plan "
                            f"gives {size}")
            continue
        if offset % 16 or offset + size > plan.workspace_bytes:
            problems.append(f"op {op.index} scratch [{offset}, {offset + size}) is misaligned or "
                            "outside the workspace")
        regions.append((f"op {op.index} scratch", offset, offset + size, first_op, last_op,
                        ("s", op.index)))
    for i, a in enumerate(regions):
        for b in regions[i + 1:]:
            if a[5] == b[5] or frozenset({a[5], b[5]}) in may_overlap:
                continue
            live_together = a[3] <= b[4] and b[3] <= a[4]
            bytes_overlap = a[1] < b[2] and b[1] < a[2]
            if live_together and bytes_overlap:
                problems.append(
                    f"{a[0]} [{a[1]}, {a[2]}) ops {a[3]}..{a[4]} overlaps {b[0]} "
                    f"[{b[1]}, {b[2]}) ops {b[3]}..{b[4]}")
    return problems


def _check_region(graph: Graph, plan: MemoryPlan) -> list[str]:
    """Replay the region's steps: every call's output rows come in order, once each, land
    inside their buffer, and every row it reads was produced and still sits in the slot the
    call reads it from (moves included); every row buffer has an aligned place in the
    workspace."""
    region = plan.row_region
    problems = []
    for t in region.capacity:
        loc = plan.row_locations.get(t)
        if loc is None:
            problems.append(f"row buffer of tensor {t} has no place in the workspace")
        elif loc.offset % 16 or loc.offset + region.row_buffer_bytes(t) > plan.workspace_bytes:
            problems.append(f"row buffer of tensor {t} at {loc.offset} is misaligned or outside "
                            "the workspace")
    for i, size in region.partial_sums().items():
        loc = plan.sums_locations.get(i)
        if loc is None or loc.offset % 4 or loc.offset + size > plan.workspace_bytes:
            problems.append(f"op {i}'s partial sums have no aligned place in the workspace")
    produced = {g.out: 0 for g in region.geometry.values()}
    slots = {t: [None] * region.capacity[t] for t in region.capacity}  # row held by each slot
    for step in region.steps:
        if not isinstance(step, Call):
            held = slots[step.tensor]
            moved = held[step.source:step.source + step.rows]
            slots[step.tensor] = moved + [None] * (len(held) - len(moved))
            continue
        g = region.geometry[step.op]
        where = dict(step.slots)
        if step.y0 != produced[g.out]:
            problems.append(f"op {step.op} computes rows {step.y0}..{step.y1 - 1} after "
                            f"{produced[g.out]} of its rows")
        reads = [(g.x, range(step.v0, step.v1))]
        if g.residual is not None:
            reads.append((g.residual, range(step.y0, step.y1)))
        for t, rows in reads:
            if t in produced and produced[t] < rows.stop:
                problems.append(f"op {step.op} rows {step.y0}..{step.y1 - 1} read row "
                                f"{rows.stop - 1} of tensor {t} before it is computed")
            if t in slots:
                held = slots[t][where[t]:where[t] + len(rows)]
                if held != list(rows):
                    problems.append(f"op {step.op} rows {step.y0}..{step.y1 - 1} read tensor {t}"
                                    f" rows {rows.start}..{rows.stop - 1} from slots holding "
                                    f"{held}")
        if g.out in slots:
            first = where[g.out]
            if first + step.y1 - step.y0 > region.capacity[g.out]:
                problems.append(f"op {step.op} rows {step.y0}..{step.y1 - 1} overflow the row "
                                f"buffer of tensor {g.out}")
            else:
                slots[g.out][first:first + step.y1 - step.y0] = list(range(step.y0, step.y1))
        produced[g.out] = max(produced[g.out], step.y1)
    for g in region.geometry.values():
        if produced[g.out] != g.out_h:
            problems.append(f"op {g.op} computes {produced[g.out]} of its {g.out_h} rows")
    return problems


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, t: int) -> int:
        self.parent.setdefault(t, t)
        while self.parent[t] != t:
            t = self.parent[t]
        return t

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra

    def members(self, t: int, universe) -> list[int]:
        root = self.find(t)
        return [x for x in universe if self.find(x) == root]


# ---- drawing --------------------------------------------------------------------------------
_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")


def _producers(graph: Graph | None) -> dict[int, tuple[int, str]]:
    """tensor -> (index, opcode) of the operator that writes it."""
    if graph is None:
        return {}
    return {t: (op.index, op.opcode) for op in graph.operators for t in op.outputs}


def _writer(b, producers: dict[int, tuple[int, str]], graph: Graph | None) -> str:
    """What fills a buffer: "op 3 CONV_2D", "op 3 scratch", "model input 0"."""
    if getattr(b, "row_tensor", None) is not None:
        return f"rows of t{b.row_tensor}"
    if b.scratch_op is not None and b.last_op != b.first_op:
        return f"ops {b.first_op}-{b.last_op} scratch"
    if b.scratch_op is not None:
        opcode = graph.operators[b.scratch_op].opcode if graph is not None else ""
        return f"op {b.scratch_op} {opcode} scratch".replace("  ", " ")
    for t in b.tensors:
        if t in producers:
            index, opcode = producers[t]
            return f"op {index} {opcode}"
    if graph is not None:
        for t in b.tensors:
            if t in graph.inputs:
                return f"model input {list(graph.inputs).index(t)}"
    return b.label


def plan_svg(plan: MemoryPlan, graph: Graph | None = None, width: int = 960,
             height: int = 540) -> str:
    """A standalone SVG of the plan: op index on x, workspace offset on y."""
    left, right, top, bottom = 90, 20, 40, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    n_ops = max([b.last_op + 1 for b in plan.buffers] + [len(graph.operators) if graph else 1, 1])
    total = max(plan.workspace_bytes, 1)

    def x(op: float) -> float:
        return left + plot_w * op / n_ops

    def y(offset: float) -> float:
        return top + plot_h * offset / total

    title = (f"memory plan: {plan.workspace_bytes:,} bytes = {plan.workspace_bytes / 1024:.1f} "
             f"KiB ({plan.strategy})")
    region = plan.row_region
    if region is not None:
        title += (f"; ops {region.first}-{region.last} row-streamed (op by op: "
                  f"{plan.op_by_op_bytes:,} bytes)")
    if graph is not None and graph.source:
        title = f"{graph.source}: {title}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="{top - 15}" font-size="14">{escape(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#f7f7f7" '
        'stroke="#999"/>',
    ]
    if region is not None:
        # The streamed region: its ops' calls interleave, so it is one column; its row buffers
        # (dotted) hold only the rows some call still needs.
        parts.append(f'<rect x="{x(region.first):.1f}" y="{top}" '
                     f'width="{x(region.last + 1) - x(region.first):.1f}" height="{plot_h}" '
                     'fill="#fff3c4" stroke="#c9a227" stroke-dasharray="6 3"/>')
        parts.append(f'<text x="{x(region.first) + 3:.1f}" y="{top + plot_h - 6}" '
                     f'font-size="10">ops {region.first}-{region.last} row-streamed '
                     f"({len(region.calls())} band calls)</text>")
    # An output written over the input it consumes (plan.overlaps) shares bytes with it at that
    # op: translucent fills let both show, and the output's outline is dashed.
    written_over = {dst: (op, src, d) for op, src, dst, d, _ in plan.overlaps}
    producers = _producers(graph)
    for i, b in enumerate(plan.buffers):
        x0, x1 = x(b.first_op), x(b.last_op + 1)
        y0, y1 = y(b.offset), y(b.offset + b.size)
        color = "#cccccc" if b.scratch_op is not None else _COLORS[i % len(_COLORS)]
        # Named by what writes it (tensor names from converters are long and alike); the
        # tensor's own name is in the tooltip. An output written over the input it consumes
        # (plan.overlaps) has a dashed outline and says so.
        writer, size = _writer(b, producers, graph), kib(b.size)
        label = f"{writer} ({size})"
        over = [written_over[t] for t in b.tensors if t in written_over]
        note = "".join(f"; op {op} writes it over tensor {src}, at least {d} bytes below"
                       for op, src, d in over)
        dash = (' stroke-dasharray="4 2"' if over else
                ' stroke-dasharray="1 2"' if getattr(b, "row_tensor", None) is not None else "")
        parts.append(
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{max(x1 - x0, 1):.1f}" '
            f'height="{max(y1 - y0, 1):.1f}" fill="{color}" fill-opacity="0.6" stroke="#333"'
            f"{dash}><title>{escape(label)}: {escape(b.label)}, offset {b.offset}, ops "
            f"{b.first_op}..{b.last_op}{escape(note)}</title></rect>")
        if y1 - y0 >= 12 and x1 - x0 >= 40:
            chars = int((x1 - x0 - 4) / 6)  # about 6 px per character at font size 10
            # The writer, then the size on a second line when the rectangle is tall enough.
            lines = [writer, size] if y1 - y0 >= 26 else [label]
            for k, line in enumerate(lines):
                text = line if len(line) <= chars else line[: max(chars - 1, 1)] + "…"
                parts.append(f'<text x="{x0 + 3:.1f}" y="{y0 + 11 + 13 * k:.1f}" font-size="10">'
                             f"{escape(text)}</text>")
    # Axes: a tick per op (thinned for long graphs) and five offset ticks.
    step = max(1, n_ops // 20)
    for op in range(0, n_ops + 1, step):
        parts.append(f'<line x1="{x(op):.1f}" y1="{top + plot_h}" x2="{x(op):.1f}" '
                     f'y2="{top + plot_h + 4}" stroke="#333"/>')
        parts.append(f'<text x="{x(op):.1f}" y="{top + plot_h + 16}" '
                     f'text-anchor="middle">{op}</text>')
    for k in range(6):
        off = total * k / 5
        parts.append(f'<line x1="{left - 4}" y1="{y(off):.1f}" x2="{left}" y2="{y(off):.1f}" '
                     'stroke="#333"/>')
        parts.append(f'<text x="{left - 6}" y="{y(off) + 4:.1f}" '
                     f'text-anchor="end">{off / 1024:.1f} KiB</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 10}" '
                 'text-anchor="middle">operator index (execution order)</text>')
    parts.append(f'<text x="15" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
                 f'transform="rotate(-90 15 {top + plot_h / 2:.1f})">workspace offset (KiB)'
                 "</text>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
