"""Graph rewrites run by ``compile_model`` after checking and before memory planning.

CONV_2D -> ADD (residual blocks): when a CONV_2D's output z is read only by one ADD whose other
operand x, z and the ADD's output all have the same shape (no broadcasting), and z is not a graph
output, the pair becomes one operator with the pseudo-opcode ``"CONV_2D+ADD"``. It computes each
conv value, requantized and clamped exactly as the conv would write it, and applies ADD's int8
arithmetic with x at the same index, so the result is bit for bit the pair's. z never exists in
memory, and the output may take x's bytes in place when x dies there (see
``microbuild.compiler.ops.conv_add``), which is what keeps a residual block to two live
activations instead of three.

The fused operator sits at the ADD's position (the conv's inputs are all computed by then), has
inputs ``[conv inputs..., x]`` and the ADD's outputs, and keeps both original operators in its
options (``"conv"``, ``"add"``, with their original indices) for the lowering, messages and the
summary. Operators are renumbered in execution order.
"""

from __future__ import annotations

import copy

from microbuild.model.ir import Graph, Operator

FUSED_CONV_ADD = "CONV_2D+ADD"
# Set in the fused operator's copy of the conv: its kernel also runs the ADD (kernel variants
# size their scratch by it). Not part of the op's signature: the fused opcode already says so.
RESIDUAL_ADD = "residual_add"


def _consumers(graph: Graph) -> dict[int, list[int]]:
    readers: dict[int, list[int]] = {}
    for op in graph.operators:
        for t in op.inputs:
            if t >= 0:
                readers.setdefault(t, []).append(op.index)
    return readers


def _with_residual(conv: Operator) -> Operator:
    fused = copy.deepcopy(conv)
    fused.options[RESIDUAL_ADD] = True
    return fused


def _fusable_conv(graph: Graph, add: Operator, readers: dict[int, list[int]]) -> Operator | None:
    """The CONV_2D feeding ``add`` that can be folded into it (the later one if both can)."""
    if len(add.inputs) != 2 or len(add.outputs) != 1 or add.inputs[0] == add.inputs[1]:
        return None
    out = graph.tensor(add.outputs[0])
    producers = {t: op for op in graph.operators for t in op.outputs}
    best = None
    for k, z in enumerate(add.inputs):
        x = add.inputs[1 - k]
        conv = producers.get(z)
        if conv is None or conv.opcode != "CONV_2D" or len(conv.outputs) != 1:
            continue
        if z in graph.outputs or readers.get(z) != [add.index] or x in conv.inputs:
            continue
        zt, xt = graph.tensor(z), graph.tensor(x)
        if not (tuple(zt.shape) == tuple(xt.shape) == tuple(out.shape)
                and zt.dtype == xt.dtype == out.dtype == "int8"):
            continue
        if best is None or conv.index > best.index:
            best = conv
    return best


def fuse_conv_add(graph: Graph) -> Graph:
    """A copy of ``graph`` with every fusable CONV_2D -> ADD pair replaced by one operator."""
    readers = _consumers(graph)
    fused_at: dict[int, Operator] = {}  # ADD index -> fused operator
    removed: set[int] = set()
    for add in graph.operators:
        if add.opcode != "ADD":
            continue
        conv = _fusable_conv(graph, add, readers)
        if conv is None or conv.index in removed:
            continue
        z = conv.outputs[0]
        x = add.inputs[1] if add.inputs[0] == z else add.inputs[0]
        fused_at[add.index] = Operator(
            index=add.index, model_index=add.model_index, opcode=FUSED_CONV_ADD, version=1,
            inputs=list(conv.inputs) + [x], outputs=list(add.outputs),
            options={"conv": _with_residual(conv), "add": copy.deepcopy(add),
                     "conv_is_input1": add.inputs[0] == z,
                     "fused_from": [conv.model_index, add.model_index]})
        removed.add(conv.index)
    if not fused_at:
        return graph
    operators = []
    for op in graph.operators:
        if op.index in removed:
            continue
        new = fused_at.get(op.index, op)
        operators.append(copy.copy(new))
    return graph.replace_operators(operators)
