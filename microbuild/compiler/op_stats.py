"""Figures the reports show per operator: multiply-accumulates (MACs) and the workspace bytes
live while it runs.

MACs are counted for the operators whose work is multiply-accumulate (convolutions, fully
connected, batch matmul), as the usual "MACs per inference" figure does: one per filter weight
applied per output element. Other operators report 0 (their work is per element, not a MAC).
"""

from __future__ import annotations

from math import prod
from typing import Any, Sequence

from microbuild.model.ir import Graph, Operator


def macs(op: Operator, graph: Graph) -> int:
    def shape(k: int) -> tuple[int, ...]:
        t = op.inputs[k] if k < len(op.inputs) else -1
        return tuple(graph.tensors[t].shape) if t >= 0 else ()

    out = tuple(graph.tensors[op.outputs[0]].shape) if op.outputs else ()
    if op.opcode == "CONV_2D":  # filter [O, H, W, I/groups]: H*W*I/groups per output element
        return prod(out) * prod(shape(1)[1:])
    if op.opcode == "DEPTHWISE_CONV_2D":  # filter [1, H, W, O]: H*W per output element
        return prod(out) * prod(shape(1)[1:3])
    if op.opcode == "FULLY_CONNECTED":  # filter [O, I]: I per output element
        return prod(out) * (shape(1)[-1] if shape(1) else 0)
    if op.opcode == "TRANSPOSE_CONV":  # each input element meets a whole filter [O, H, W, I]/I
        filt, data = shape(1), shape(2)
        return prod(data) * prod(filt[:3]) if filt and data else 0
    if op.opcode == "BATCH_MATMUL":  # the inner dimension per output element
        lhs = shape(0)
        adj_x = bool(op.options.get("adj_x"))
        inner = (lhs[-2] if adj_x else lhs[-1]) if lhs else 0
        return prod(out) * inner
    return 0


def live_bytes(buffers: Sequence[dict[str, Any]], op_count: int) -> list[int]:
    """Per operator (execution order), the workspace bytes live while it runs: every tensor from
    its producer to its last reader, and the op's own scratch. Bytes, not a sum of buffer sizes:
    an output the planner writes over the input it consumes (compiler/overlap.py) shares bytes
    with that input, and they count once."""
    spans: list[list[tuple[int, int]]] = [[] for _ in range(op_count)]
    parts: dict[str, int] = {}
    for b in buffers:
        for i in range(max(b["first_op"], 0), min(b["last_op"], op_count - 1) + 1):
            # A workspace split across memory regions: each part has its own offsets.
            base = parts.setdefault(b.get("region", ""), len(parts)) << 40
            spans[i].append((base + b["offset"], base + b["offset"] + b["size"]))
    live = []
    for intervals in spans:
        total, end = 0, None
        for start, stop in sorted(intervals):
            if end is None or start >= end:
                total += stop - start
                end = stop
            elif stop > end:
                total += stop - end
                end = stop
        live.append(total)
    return live
