"""Compile-time evaluation: operators whose inputs are known become constants.

Converters leave graph plumbing in the model that TFLM evaluates on every invocation: the Keras
``Reshape``/``Flatten`` idiom (SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE), shape arithmetic in int32,
casts and slices of constant tables. When every input of such an operator is a constant (or, for
SHAPE, only the static shape of its input is read), its result is the same on every run, so it is
computed here, in Python, with TFLM's semantics, and stored as a constant tensor; the operator
disappears from the generated code. An operator whose outputs nothing reads afterwards is removed
too (``remove_dead_operators``), so the device runs only what the graph's outputs depend on.

Each operator lowering says how to evaluate itself (``OpLowering.fold``); this module only walks
the graph. Variable tensors (state kept between invocations) are never folded.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from microbuild.compiler.ops import REGISTRY
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator

# Operators that matter for what they do, not only for what they output.
SIDE_EFFECT_OPS = frozenset({"ASSIGN_VARIABLE", "CALL_ONCE"})

# What a fold may raise on a malformed operator (wrong ranks, indices out of range, ...): turned
# into a ModelError naming the operator rather than shown as a traceback.
_EVALUATION_ERRORS = (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError,
                      KeyError, MemoryError)

# A folded tensor larger than this stays an operator: folding would bloat the flash image.
MAX_FOLDED_BYTES = 4 << 20


def fold_constants(graph: Graph) -> Graph:
    """Evaluate every operator whose result is known at compile time; return the graph without
    them, their outputs now constant tensors."""
    kept: list[Operator] = []
    folded: Counter[str] = Counter()
    for op in graph.operators:
        if fold_operator(op, graph):
            folded[op.opcode] += 1
        else:
            kept.append(op)
    if not folded:
        return graph
    what = ", ".join(f"{name} x{n}" if n > 1 else name for name, n in sorted(folded.items()))
    graph.notes.append(f"{sum(folded.values())} operator(s) evaluated at compile time ({what})")
    return graph.replace_operators(kept)


def fold_operator(op: Operator, graph: Graph) -> bool:
    """Evaluate ``op`` now if its result is known at compile time: its outputs become constant
    tensors of ``graph`` and True is returned; False leaves everything as it was."""
    lowering = REGISTRY.get(op.opcode)
    if lowering is None or not _may_fold(op, graph) or not lowering.can_fold(op, graph):
        return False
    values = _evaluate(lowering, op, graph)
    if values is None:
        return False
    for t, value in zip(op.outputs, values):
        _store(graph, op, t, value)
    return True


def _may_fold(op: Operator, graph: Graph) -> bool:
    if not op.outputs or op.opcode in SIDE_EFFECT_OPS:
        return False
    return not any(graph.tensors[t].is_variable for t in op.outputs if t >= 0)


def _evaluate(lowering, op: Operator, graph: Graph) -> list[np.ndarray] | None:
    where = graph.source or "model"
    try:
        values = lowering.fold(op, graph)
    except ModelError as exc:
        raise ModelError(f"{where}: {op.describe()}: {exc}") from None
    except _EVALUATION_ERRORS as exc:
        raise ModelError(f"{where}: {op.describe()}: its inputs are constant but it cannot be "
                         f"evaluated ({type(exc).__name__}: {exc}); the operator's inputs or "
                         "options are malformed") from None
    if values is None:
        return None
    values = [np.asarray(v) for v in values]
    if len(values) != len(op.outputs):
        raise RuntimeError(f"{op.describe()}: fold gave {len(values)} values for "
                           f"{len(op.outputs)} outputs")
    if sum(v.nbytes for v in values) > MAX_FOLDED_BYTES:
        return None
    return values


def _store(graph: Graph, op: Operator, t: int, value: np.ndarray) -> None:
    """Make tensor ``t`` the constant ``value``, checked against what the model declares."""
    tensor = graph.tensors[t]
    where = graph.source or "model"
    if value.dtype.name != tensor.dtype and not (tensor.dtype == "bool" and value.dtype == bool):
        raise ModelError(f"{where}: {op.describe()}: evaluates to {value.dtype.name} but its "
                         f"output tensor {t} '{tensor.name}' is {tensor.dtype}")
    if value.size != tensor.num_elements:
        raise ModelError(f"{where}: {op.describe()}: evaluates to shape {list(value.shape)} but "
                         f"its output tensor {t} '{tensor.name}' has shape {list(tensor.shape)}")
    tensor.data = np.ascontiguousarray(value).reshape(tensor.shape)


def remove_dead_operators(graph: Graph) -> Graph:
    """Drop operators none of whose outputs reaches a graph output (or a variable)."""
    live = set(graph.outputs)
    kept: list[Operator] = []
    for op in reversed(graph.operators):
        outputs = [t for t in op.outputs if t >= 0]
        needed = (op.opcode in SIDE_EFFECT_OPS
                  or any(t in live or graph.tensors[t].is_variable for t in outputs))
        if needed:
            kept.append(op)
            live.update(t for t in op.inputs if t >= 0)
    kept.reverse()
    removed = len(graph.operators) - len(kept)
    if removed == 0:
        return graph
    graph.notes.append(f"{removed} operator(s) removed: nothing reads their results")
    return graph.replace_operators(kept)
