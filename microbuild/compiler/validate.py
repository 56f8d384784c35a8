"""Decide, before any code is generated, whether a graph can be compiled.

Every problem is collected first and reported in one :class:`ModelError`, so a user fixing a model
sees the whole list at once rather than one error per attempt:

- a hybrid (dynamic-range) quantized model, which TFLM refuses too, gets one short message
  saying how to quantize it fully, not one line per tensor (float32 models compile: every
  operator whose lowering takes float32);
- an operator microbuild has no kernel for is named once per opcode with the indices of its
  operators, and the message says whether TFLM has a kernel for it (if not, the model would not
  run on a microcontroller in TFLM either);
- every other reason is one line per operator (``op 3 PAD: paddings '...' is not constant``).

Operator indices in messages are the model's own (``Operator.model_index``), as a model viewer
shows them, even after compile-time folding removed operators before them.
"""

from __future__ import annotations

from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.tflm_ops import TFLM_BUILTIN_OPS, TFLM_CUSTOM_OPS
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator

# Operators whose second input is a weight tensor: float weights mean a float model, int8 weights
# with float activations a dynamic-range ("hybrid") quantized one.
_WEIGHTED_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV",
                           "BATCH_MATMUL", "UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF"})

# When some operator of a float model has no float32 kernel here.
_FLOAT_HINT = ("hint: `microbuild ops` lists the operators microbuild compiles in float32; "
               "quantizing the model to int8 (converter.optimizations = [tf.lite.Optimize.DEFAULT] "
               "with a representative dataset) also makes it smaller and faster on a "
               "microcontroller")

_QUANTIZE_HINT = (
    "hint: convert with full integer quantization: converter.optimizations = "
    "[tf.lite.Optimize.DEFAULT], converter.representative_dataset = <a generator of ~100 real "
    "inputs>, converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8] "
    "(and inference_input_type / inference_output_type = tf.int8 for int8 inputs and outputs)")


def check_graph(graph: Graph) -> None:
    """Raise one ModelError listing every reason the graph cannot be compiled."""
    where = graph.source or "model"
    if graph.subgraph_count > 1:
        _refuse(where, [f"the model has {graph.subgraph_count} subgraphs; only single-subgraph "
                        "models are supported (control flow such as WHILE/IF needs more)"])
    hybrid = _hybrid_model_kind(graph)
    if hybrid is not None:
        raise ModelError(f"{where}: {hybrid}; TFLM refuses such models and so does microbuild: "
                         "it compiles float32 and integer-quantized models.\n"
                         f"{_QUANTIZE_HINT}")

    missing: dict[str, list[int]] = {}  # opcode (or custom code) -> model op indices
    # (opcode, the dtypes its lowering does not take) -> model op indices
    wrong_types: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    op_reasons: list[str] = []
    float_problem = False
    # Tensors computed from an operator microbuild has no kernel for: their shapes were never
    # evaluated (an open batch's REDUCE_PROD), so what their readers say of them is noise.
    unknown: set[int] = set()
    for op in graph.operators:
        lowering = REGISTRY.get(op.opcode)
        if lowering is None or (op.opcode == "CUSTOM"):
            missing.setdefault(_op_name(op), []).append(op.model_index)
            unknown.update(op.outputs)
            continue
        if unknown.intersection(op.inputs):
            unknown.update(op.outputs)
            continue
        # Inputs a lowering reads only at compile time (sizes, paddings, block shapes) say why
        # they are not constant in its own check, not as a wrong run-time dtype.
        dtypes = _unsupported_dtypes(op, graph, lowering.dtypes, lowering.parameter_inputs)
        if dtypes:
            float_problem |= any(d.startswith("float") for d in dtypes)
            wrong_types.setdefault((op.opcode, dtypes), []).append(op.model_index)
            continue
        # Lowerings may assume their dtypes, so they only see ops that passed the generic check.
        op_reasons.extend(f"{op.describe()}: {r}" for r in lowering.check(op, graph))

    if not missing and not wrong_types and not op_reasons:
        return
    lines = [_missing_line(name, indices) for name, indices in sorted(missing.items())]
    lines += [_dtype_line(opcode, dtypes, indices)
              for (opcode, dtypes), indices in sorted(wrong_types.items())]
    lines += op_reasons
    hints = []
    if missing:
        hints.append("hint: `microbuild ops` lists every TFLM operator and whether microbuild "
                     "compiles it")
    if float_problem:
        hints.append(_FLOAT_HINT)
    _refuse(where, lines, hints)


def _refuse(where: str, lines: list[str], hints: list[str] = ()) -> None:
    text = [f"{where}: cannot compile this model:"] + [f"  {line}" for line in lines]
    raise ModelError("\n".join(text + list(hints)))


def _op_name(op: Operator) -> str:
    custom = op.options.get("custom_code")
    return f"custom operator '{custom}'" if op.opcode == "CUSTOM" else op.opcode


def _where(indices: list[int]) -> str:
    return f"op {indices[0]}" if len(indices) == 1 else \
        f"ops {', '.join(str(i) for i in indices)}"


def _dtype_line(opcode: str, dtypes: tuple[str, ...], indices: list[int]) -> str:
    lowering = REGISTRY[opcode]
    what = " and ".join(dtypes)
    notes = [lowering.dtype_note(d) for d in dtypes]
    why = ""
    if all(notes):
        why = "".join(f" ({note})" for note in notes)
    elif "int16" in dtypes:
        why = " (16-bit activations, the converter's 16x8 quantization, are not supported " \
              "for it yet)"
    return (f"{opcode} ({_where(indices)}): has {what} tensors at run time; microbuild's "
            f"{opcode} takes {' and '.join(sorted(lowering.dtypes))}{why}")


def _missing_line(name: str, indices: list[int]) -> str:
    where = _where(indices)
    custom = name.startswith("custom operator '")
    known = (name[len("custom operator '"):-1] in TFLM_CUSTOM_OPS if custom
             else name in TFLM_BUILTIN_OPS)
    if known:
        tflm = "TFLM has a kernel for it, microbuild does not yet"
    elif custom:
        tflm = "TFLM has no kernel for it either: register your own in TFLM, or replace it"
    else:
        tflm = "TFLM has no kernel for it either, so no microcontroller runtime would run " \
               "this model as it is"
    return f"{name} ({where}): {tflm}"


def _hybrid_model_kind(graph: Graph) -> str | None:
    """'this is a dynamic-range ("hybrid") quantized model ...', or None for a float32 or an
    integer-quantized model."""
    computing = [op for op in graph.operators if op.opcode not in ("QUANTIZE", "DEQUANTIZE")]
    if not computing:
        return None

    def float_activation(t: int) -> bool:
        return t >= 0 and graph.tensors[t].dtype in ("float32", "float16") \
            and not graph.tensors[t].is_constant

    float_ops = [op for op in computing if any(float_activation(t) for t in op.outputs)]
    if not float_ops:
        return None
    weighted = [op for op in float_ops if op.opcode in _WEIGHTED_OPS and len(op.inputs) > 1
                and op.inputs[1] >= 0]
    hybrid = [op for op in weighted
              if graph.tensors[op.inputs[1]].dtype in ("int8", "int4", "uint8")]
    if hybrid:
        return (f"this is a dynamic-range (\"hybrid\") quantized model: {len(hybrid)} operators "
                "have int8 weights but compute on float32 activations")
    return None


def _unsupported_dtypes(op: Operator, graph: Graph, dtypes: frozenset[str],
                        parameter_inputs: tuple[int, ...] = ()) -> tuple[str, ...]:
    """The dtypes of the op's run-time tensors its lowering does not take, leaving out the inputs
    at the positions ``parameter_inputs`` (the lowering's check refuses those when they are not
    constant). QUANTIZE and DEQUANTIZE take float32 wherever TFLM does, at the graph's edges or
    between a float and an integer part, so no rule here singles out the edges."""
    found = set()
    for role, indices in (("input", op.inputs), ("output", op.outputs)):
        for k, t in enumerate(indices):
            if t < 0 or (role == "input" and k in parameter_inputs):
                continue
            tensor = graph.tensors[t]
            if tensor.is_constant or tensor.dtype in dtypes:
                continue
            found.add(tensor.dtype)
    return tuple(sorted(found))
