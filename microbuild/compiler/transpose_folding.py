"""Fold the layout transposes of PyTorch exports into the weights that read them.

A PyTorch model computes in NCHW; converted to TFLite (NHWC), ``torch.flatten(x, 1)`` before an
``nn.Linear`` becomes TRANSPOSE (NHWC -> NCHW) -> RESHAPE -> FULLY_CONNECTED, so that the linear
layer sees its inputs in PyTorch's order. TFLM runs that TRANSPOSE on every inference. It only
reorders the values within each row the FULLY_CONNECTED reads, so the same result comes from the
untransposed tensor and the weight matrix with its columns reordered the same way -- a permutation
done once, here. Per-channel weight scales belong to output rows and do not move. The transpose
and the reshape then disappear (the reshape is left to the dead-operator pass), and the product
is bit for bit the same: every output is the same sum of the same products, only the order in
which the columns are stored changes.

Applies when each tensor between the TRANSPOSE and the FULLY_CONNECTED has no other reader and is
no graph output, the transpose keeps the leading (row) dimensions in place, and the weights are
constant. A TRANSPOSE at the graph input (NCHW in, NHWC for the first convolution) cannot be
folded: the caller's data really is NCHW, and a convolution reads neighbouring pixels, not a
fixed permutation of its weights. It runs on the device, as in TFLM.
"""

from __future__ import annotations

import copy

import numpy as np

from microbuild.compiler.spatial import same_quantization
from microbuild.model.ir import Graph, Operator, Tensor

# Operators between the TRANSPOSE and the FULLY_CONNECTED that only change the shape.
_SHAPE_ONLY = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS"})


def fold_transposes_into_weights(graph: Graph) -> Graph:
    """Rewrite every foldable TRANSPOSE -> (RESHAPE) -> FULLY_CONNECTED chain; the chain's
    transpose and reshapes are left without readers for ``remove_dead_operators``."""
    producers = {t: op for op in graph.operators for t in op.outputs}
    readers: dict[int, list[Operator]] = {}
    for op in graph.operators:
        for t in op.inputs:
            if t >= 0:
                readers.setdefault(t, []).append(op)
    folded = []
    for fc in graph.operators:
        if fc.opcode != "FULLY_CONNECTED" or len(fc.inputs) < 2 or min(fc.inputs[:2]) < 0:
            continue
        chain = _chain_to_transpose(graph, fc.inputs[0], producers, readers)
        if chain is None:
            continue
        transpose = chain
        source = transpose.inputs[0]
        # The FULLY_CONNECTED reads its input's zero point; TFLM's TRANSPOSE and RESHAPE copy raw
        # values whatever their tensors' quantization says, so the source must say the same.
        if not same_quantization(graph.tensors[source], graph.tensors[fc.inputs[0]]):
            continue
        order = _column_order(graph, transpose, graph.tensors[fc.inputs[1]])
        if order is None:
            continue
        fc.inputs = [source, _permuted_weights(graph, fc.inputs[1], order), *fc.inputs[2:]]
        folded.append(f"TRANSPOSE op {transpose.model_index} into FULLY_CONNECTED op "
                      f"{fc.model_index}'s weights")
    if folded:
        graph.notes.append("folded " + "; ".join(folded) + " (no transpose runs on the device)")
    return graph


def _chain_to_transpose(graph: Graph, t: int, producers: dict[int, Operator],
                        readers: dict[int, list[Operator]]) -> Operator | None:
    """The TRANSPOSE that ``t`` comes from through shape-only operators, or None when the chain
    has another reader, a graph output or a constant in it."""
    while True:
        tensor = graph.tensors[t]
        if tensor.is_constant or t in graph.outputs or len(readers.get(t, [])) != 1:
            return None
        op = producers.get(t)
        if op is None:
            return None
        if op.opcode == "TRANSPOSE":
            return op if len(op.inputs) == 2 and op.inputs[0] >= 0 and op.inputs[1] >= 0 else None
        if op.opcode not in _SHAPE_ONLY or not op.inputs or op.inputs[0] < 0:
            return None
        t = op.inputs[0]


def _column_order(graph: Graph, transpose: Operator, weights: Tensor) -> np.ndarray | None:
    """``order`` with ``W[:, order]`` = W', the weights that read the untransposed rows, or None
    when this transpose moves values between rows (or cannot be read)."""
    src = graph.tensors[transpose.inputs[0]]
    perm_t = graph.tensors[transpose.inputs[1]]
    if not perm_t.is_constant or weights.data is None or len(weights.shape) != 2:
        return None
    perm = [int(p) for p in np.asarray(perm_t.data).reshape(-1)]
    rank = len(src.shape)
    if sorted(perm) != list(range(rank)) or src.dtype != "int8":
        return None
    depth = int(weights.shape[1])
    # Find the row boundary: the trailing dimensions from ``axis`` on hold exactly one row, and
    # the leading ones (the rows) must stay where they are.
    for axis in range(rank + 1):
        inner = int(np.prod(src.shape[axis:], dtype=np.int64))
        if inner == depth:
            if perm[:axis] != list(range(axis)):
                return None
            inner_perm = [p - axis for p in perm[axis:]]
            positions = np.arange(depth).reshape(src.shape[axis:])
            # positions.transpose(...) lists, for each column of the transposed row, the column
            # of the untransposed row holding the same value.
            return positions.transpose(inner_perm).reshape(-1)
    return None


def _permuted_weights(graph: Graph, t: int, order: np.ndarray) -> int:
    """A new constant tensor: the weights with their columns moved to the untransposed order."""
    weights = graph.tensors[t]
    permuted = np.empty_like(weights.data)
    permuted[:, order] = weights.data
    tensor = copy.copy(weights)
    tensor.index = len(graph.tensors)
    tensor.name = f"{weights.name} (columns in NHWC order)"
    tensor.data = permuted
    graph.tensors.append(tensor)
    return tensor.index
