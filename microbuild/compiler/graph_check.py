"""Is the graph a well-formed data flow? Checked once, on the graph as read, before anything else.

A converter writes every run-time tensor once (by one operator, or by the caller as a model input)
before any operator reads it, and keeps variable tensors (state kept between runs) as inputs of the
stateful operators that update them. The later passes and the memory planner rely on this: a
tensor's lifetime runs from its producer to its last reader, and variables live in the state
buffer, not the workspace. A damaged file or a broken converter can break it (a tensor nobody
writes, two writers, a reader before its writer, an activation flagged as a variable); such a graph
is refused here, in one message that names each tensor (index and name) and operator (index and
opcode), rather than reaching the planner's bookkeeping.
"""

from __future__ import annotations

from microbuild.compiler.ops import REGISTRY
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator

# At most this many problems are listed; a badly damaged file could otherwise list thousands.
_SHOWN = 20


def check_data_flow(graph: Graph) -> None:
    """Raise one ModelError listing every way the graph is not a well-formed data flow."""
    problems = data_flow_problems(graph)
    if not problems:
        return
    where = graph.source or "model"
    more = f"\n  ... and {len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
    raise ModelError(f"{where}: the model's graph is malformed:\n" +
                     "\n".join(f"  {p}" for p in problems[:_SHOWN]) + more +
                     "\nhint: the file is damaged, or the converter that wrote it is broken; "
                     "convert the model again")


def data_flow_problems(graph: Graph) -> list[str]:
    tensors = graph.tensors

    def name(t: int) -> str:
        return f"tensor {t} '{tensors[t].name}'"

    problems: list[str] = []
    inputs, outputs = set(graph.inputs), set(graph.outputs)
    for t in sorted(inputs | outputs):
        if tensors[t].is_variable:
            role = "a model input" if t in inputs else "a model output"
            problems.append(f"{name(t)} is {role} but is marked as a variable (state kept "
                            "between runs); only stateful operators' state inputs are variables")

    producer: dict[int, int] = {}  # tensor -> the index of the op that writes it
    for position, op in enumerate(graph.operators):
        for t in op.outputs:
            if t < 0:
                continue
            tensor = tensors[t]
            if tensor.is_constant:
                problems.append(f"{op.describe()} writes {name(t)}, which is a constant (it has "
                                "data in the file)")
            elif tensor.is_variable:
                if t in inputs or t in outputs:
                    continue  # said above
                problems.append(f"{op.describe()} writes {name(t)} as its output, but it is "
                                "marked as a variable (state kept between runs); stateful "
                                "operators update their state inputs instead")
            elif t in inputs:
                problems.append(f"{op.describe()} writes {name(t)}, which is a model input "
                                "(the caller writes it)")
            elif t in producer:
                first = graph.operators[producer[t]]
                problems.append(f"{name(t)} is written by both {first.describe()} and "
                                f"{op.describe()}")
            else:
                producer[t] = position

    reported: set[int] = set()
    for position, op in enumerate(graph.operators):
        for t in op.inputs:
            if t < 0 or t in reported or t in inputs:
                continue
            tensor = tensors[t]
            if tensor.is_constant or tensor.is_variable or _is_state_input(op, t):
                continue
            written_at = producer.get(t)
            if written_at is not None and written_at < position:
                continue
            reported.add(t)
            if written_at is None:
                problems.append(f"{name(t)} is read by {op.describe()} but no operator produces "
                                "it and it is not a model input or constant")
            else:
                problems.append(f"{name(t)} is read by {op.describe()} before "
                                f"{graph.operators[written_at].describe()} produces it (the "
                                "operators are not in execution order)")

    for t in dict.fromkeys(graph.outputs):  # each once, in order
        tensor = tensors[t]
        if t in producer or t in inputs or tensor.is_constant or tensor.is_variable:
            continue
        problems.append(f"{name(t)} is a model output but no operator produces it and it is not "
                        "a model input or constant")
    return problems


def _is_state_input(op: Operator, t: int) -> bool:
    """Whether ``t`` is one of the op's state inputs (``OpLowering.state_inputs``): one that is not
    a variable tensor is the operator's check to refuse, which says what TFLM requires of it."""
    lowering = REGISTRY.get(op.opcode)
    return lowering is not None and any(
        k < len(op.inputs) and op.inputs[k] == t for k in lowering.state_inputs)
