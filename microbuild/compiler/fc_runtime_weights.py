"""An int8 FULLY_CONNECTED whose weights are computed at run time becomes the BATCH_MATMUL it is.

litert-torch exports attention's ``q @ k.T`` as a FULLY_CONNECTED whose "weights" are ``k``, an
activation: per-tensor scale and a zero point of its own. TFLM's FULLY_CONNECTED runs it with its
filter offset; microbuild's int8 FULLY_CONNECTED kernels need constant weights (the input zero
point is folded into the bias at compile time). Without a bias and a fused activation the
operator computes exactly BATCH_MATMUL(x, w, adj_y=True): the sums of (x - x zero point) *
(w - w zero point) in int32, requantized with the multiplier of x scale * w scale / y scale
computed in double and TFLM's MultiplyByQuantizedMultiplier, clamped to int8, which is what
TFLM's reference BATCH_MATMUL computes; so that lowering runs it, bit-exact.
"""

from __future__ import annotations

from microbuild.model.ir import Graph


def runtime_weight_fully_connected_as_batch_matmul(graph: Graph) -> Graph:
    rewritten = []
    for op in graph.operators:
        if op.opcode != "FULLY_CONNECTED" or len(op.inputs) < 2 or min(op.inputs[:2]) < 0:
            continue
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0
        if (w.is_constant or has_bias or x.dtype != "int8" or w.dtype != "int8"
                or w.quant is None or w.quant.per_channel or len(w.shape) != 2
                or op.options.get("fused_activation_function", "NONE") != "NONE"
                or tuple(y.shape) != tuple(x.shape[:-1]) + (w.shape[0],)):
            continue
        op.opcode = "BATCH_MATMUL"
        op.inputs = [op.inputs[0], op.inputs[1]]
        op.options = {"adj_x": False, "adj_y": True}
        rewritten.append(str(op.model_index))
    if rewritten:
        graph.notes.append(f"FULLY_CONNECTED op(s) {', '.join(rewritten)} with weights computed at "
                           "run time run as BATCH_MATMUL (the same sums and requantization)")
    return graph
