"""Fuse the converter's dilated-convolution pattern back into one dilated convolution.

The TFLite converter lowers a Keras ``Conv2D`` / ``DepthwiseConv2D`` with ``dilation_rate`` in a
model with an open batch size (Keras' default) to

    SPACE_TO_BATCH_ND (block = dilation, paddings) -> CONV_2D / DEPTHWISE_CONV_2D (VALID, stride 1)
    -> BATCH_TO_SPACE_ND (block = dilation, crops)

and records the tensors in between with batch 1 where the operators produce block_h * block_w
batches. TFLM allocates by those recorded shapes, computes one of the batches and leaves the rest
of the output unwritten (stale arena contents), so there is no TFLM result to be bit-exact with;
with a fixed batch size the converter emits one convolution with dilation instead. This pass
rewrites the pattern into that convolution: for every output pixel it sums the same input x
weight products (the padding SPACE_TO_BATCH_ND adds is the zero point, which contributes nothing,
as the padding a convolution skips) and requantizes them the same way, so the result is bit for
bit what TFLM computes for the fixed-batch conversion of the same model.

Applies when each tensor in between has exactly one reader and is no graph output, both block
shapes agree, the convolution is VALID with stride 1 and no dilation of its own, the values are
copied without rescaling (same quantization across SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND), and
the cropped result is what SAME or VALID padding of the dilated convolution gives. Otherwise the
three operators stay, and SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND refuse contradictory shapes.
"""

from __future__ import annotations

import copy

import numpy as np

from microbuild.compiler.spatial import output_size, padding_before, same_quantization
from microbuild.model.ir import Graph, Operator

_CONVOLUTIONS = ("CONV_2D", "DEPTHWISE_CONV_2D")


def _ints(graph: Graph, t: int) -> list[int] | None:
    tensor = graph.tensors[t] if t >= 0 else None
    if tensor is None or not tensor.is_constant or tensor.dtype != "int32":
        return None
    return [int(v) for v in np.asarray(tensor.data).reshape(-1)]


def fuse_dilated_convolutions(graph: Graph) -> Graph:
    """Replace every matching SPACE_TO_BATCH_ND -> convolution -> BATCH_TO_SPACE_ND chain by one
    dilated convolution."""
    readers: dict[int, list[Operator]] = {}
    for op in graph.operators:
        for t in op.inputs:
            if t >= 0:
                readers.setdefault(t, []).append(op)
    replaced: dict[int, Operator | None] = {}  # id(op) -> replacement (None: dropped)
    fused = []
    for s2b in graph.operators:
        if s2b.opcode != "SPACE_TO_BATCH_ND" or id(s2b) in replaced:
            continue
        match = _match(graph, s2b, readers)
        if match is None:
            continue
        conv, b2s, new_conv = match
        replaced[id(s2b)] = None
        replaced[id(conv)] = None
        replaced[id(b2s)] = new_conv
        fused.append(f"SPACE_TO_BATCH_ND op {s2b.model_index} -> {conv.opcode} op "
                     f"{conv.model_index} -> BATCH_TO_SPACE_ND op {b2s.model_index} into one "
                     f"{conv.opcode} with dilation {new_conv.options['dilation_h_factor']}x"
                     f"{new_conv.options['dilation_w_factor']}")
    if not fused:
        return graph
    graph.notes.append(
        "fused " + "; ".join(fused) + " (the converter's pattern for a dilated convolution in a "
        "model with an open batch size; TFLM runs it with the recorded batch-1 shapes and leaves "
        "most of the output unwritten, microbuild computes the dilated convolution)")
    operators = []
    for op in graph.operators:
        if id(op) not in replaced:
            operators.append(op)
        elif replaced[id(op)] is not None:
            operators.append(replaced[id(op)])
    return graph.replace_operators(operators)


def _only_reader(graph: Graph, t: int, readers) -> Operator | None:
    found = readers.get(t, [])
    if len(found) != 1 or t in graph.outputs:
        return None
    return found[0]


def _match(graph: Graph, s2b: Operator, readers):
    if len(s2b.inputs) != 3 or len(s2b.outputs) != 1 or min(s2b.inputs) < 0:
        return None
    x = graph.tensors[s2b.inputs[0]]
    block, pads = _ints(graph, s2b.inputs[1]), _ints(graph, s2b.inputs[2])
    if len(x.shape) != 4 or block is None or pads is None or len(block) != 2 or len(pads) != 4:
        return None
    conv = _only_reader(graph, s2b.outputs[0], readers)
    if conv is None or conv.opcode not in _CONVOLUTIONS or conv.inputs[0] != s2b.outputs[0] \
            or len(conv.outputs) != 1:
        return None
    o = conv.options
    if (o.get("padding") != "VALID" or o.get("stride_h", 1) != 1 or o.get("stride_w", 1) != 1
            or o.get("dilation_h_factor", 1) != 1 or o.get("dilation_w_factor", 1) != 1):
        return None
    b2s = _only_reader(graph, conv.outputs[0], readers)
    if b2s is None or b2s.opcode != "BATCH_TO_SPACE_ND" or len(b2s.inputs) != 3 \
            or b2s.inputs[0] != conv.outputs[0] or len(b2s.outputs) != 1:
        return None
    if _ints(graph, b2s.inputs[1]) != block:
        return None
    crops = _ints(graph, b2s.inputs[2])
    if crops is None or len(crops) != 4:
        return None
    y = graph.tensors[b2s.outputs[0]]
    between_in, between_out = graph.tensors[s2b.outputs[0]], graph.tensors[conv.outputs[0]]
    if not (same_quantization(x, between_in) and same_quantization(between_out, y)):
        return None
    weights = graph.tensors[conv.inputs[1]]
    if len(weights.shape) != 4 or len(y.shape) != 4 or y.shape[0] != x.shape[0]:
        return None
    kh, kw = weights.shape[1], weights.shape[2]
    padding = None
    for candidate in ("SAME", "VALID"):
        ok = True
        for size, k, b, before, crop, out in ((x.shape[1], kh, block[0], pads[0], crops[0],
                                               y.shape[1]),
                                              (x.shape[2], kw, block[1], pads[2], crops[2],
                                               y.shape[2])):
            expected = output_size(candidate, size, k, 1, b)
            lead, _ = padding_before(size, k, 1, b, expected)
            if out != expected or before - crop != (lead if candidate == "SAME" else 0):
                ok = False
        if ok:
            padding = candidate
            break
    if padding is None:
        return None
    fused = copy.copy(conv)
    fused.inputs = [s2b.inputs[0], *conv.inputs[1:]]
    fused.outputs = [b2s.outputs[0]]
    fused.options = dict(conv.options, padding=padding, dilation_h_factor=block[0],
                         dilation_w_factor=block[1])
    fused.model_index = conv.model_index
    return conv, b2s, fused
