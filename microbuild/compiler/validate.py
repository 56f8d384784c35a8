"""Decide, before any code is generated, whether a graph can be compiled.

Every problem is collected first and reported in one :class:`ModelError`, one line per offending
operator reason (``op 3 SQUARED_DIFFERENCE: no kernel for this operator``), so a user fixing a
model sees the whole list at once rather than one error per attempt.
"""

from __future__ import annotations

from microbuild.compiler.ops import REGISTRY
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator

# Float tensors are only allowed at the edges, where QUANTIZE/DEQUANTIZE convert them.
_FLOAT_EDGE_OPS = {"input": "QUANTIZE", "output": "DEQUANTIZE"}

_QUANTIZE_HINT = (
    "hint: convert the model with full integer quantization: converter.optimizations = "
    "[tf.lite.Optimize.DEFAULT], a representative_dataset, and target_spec.supported_ops = "
    "[tf.lite.OpsSet.TFLITE_BUILTINS_INT8]")


def check_graph(graph: Graph) -> None:
    """Raise one ModelError listing every reason the graph cannot be compiled."""
    where = graph.source or "model"
    general: list[str] = []
    if graph.subgraph_count > 1:
        general.append(
            f"the model has {graph.subgraph_count} subgraphs; only single-subgraph models are "
            "supported (control flow such as WHILE/IF needs more)")
    for k, t in enumerate(graph.inputs):
        tensor = graph.tensors[t]
        if tensor.is_dynamic:
            general.append(f"graph input {k} '{tensor.name}' has a dynamic shape "
                           f"{list(tensor.shape_signature or ())}; give it a fixed shape "
                           "(batch size 1) before converting")

    op_reasons: list[str] = []
    float_problem = False
    for op in graph.operators:
        reasons = _tensor_reasons(op, graph)
        float_problem |= any(graph.tensors[t].dtype.startswith("float") and
                             not graph.tensors[t].is_constant
                             for t in op.inputs + op.outputs if t >= 0) and bool(reasons)
        lowering = REGISTRY.get(op.opcode)
        if lowering is None:
            custom = op.options.get("custom_code")
            what = f"custom operator '{custom}'" if custom else "this operator"
            reasons.insert(0, f"no kernel for {what}")
        elif not reasons:
            # Lowerings may assume int8 quantized tensors, so they only see ops that passed the
            # generic checks.
            reasons = list(lowering.check(op, graph))
        op_reasons.extend(f"op {op.index} {op.opcode}: {r}" for r in reasons)

    if not general and not op_reasons:
        return
    lines = [f"{where}: cannot compile this model:"]
    lines += [f"  {r}" for r in general + op_reasons]
    lines.append(f"hint: supported operators are {', '.join(sorted(REGISTRY)) or '(none)'}")
    if float_problem:
        lines.append(_QUANTIZE_HINT)
    raise ModelError("\n".join(lines))


def _tensor_reasons(op: Operator, graph: Graph) -> list[str]:
    """Dynamic shapes and non-int8 activations among an op's run-time tensors."""
    reasons = []
    for role, indices in (("input", op.inputs), ("output", op.outputs)):
        for t in indices:
            if t < 0:
                continue
            tensor = graph.tensors[t]
            if tensor.is_dynamic:
                reasons.append(f"{role} tensor {t} '{tensor.name}' has a dynamic shape "
                               f"{list(tensor.shape_signature or ())}")
            if tensor.is_constant or tensor.dtype == "int8":
                continue
            edge = graph.inputs if role == "input" else graph.outputs
            if (tensor.dtype == "float32" and t in edge
                    and op.opcode == _FLOAT_EDGE_OPS[role]):
                continue
            reasons.append(
                f"{role} tensor {t} '{tensor.name}' is {tensor.dtype}; only int8 activations are "
                "supported (float32 only as a graph input to QUANTIZE or a graph output of "
                "DEQUANTIZE)")
    return reasons
