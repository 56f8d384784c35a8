"""WHILE loops whose trip count is known at compile time, unrolled into the main graph.

TF 2.21 converts Keras 3's GRU and LSTM layers (and ``tf.while_loop`` over a fixed range) to a
WHILE operator: a condition subgraph (``step < 12 and time < 12``) and a body subgraph (one time
step: counters + 1, GATHER of the step's input row, the gates' FULLY_CONNECTEDs and activations).
TFLM interprets the loop, copying the carried tensors between the subgraphs each iteration. Here
the condition is evaluated at compile time with the operators' own constant folding (the counters
start as constants and the body adds constants to them), and the body's operators are copied
into the graph once per iteration, each copy reading the previous one's results. The kernels then
compute exactly TFLM's operations in TFLM's order, so the result is bit-exact; the body's weights
are shared by every copy, not duplicated.

A loop whose condition depends on a run-time value, or that would need more than
``MAX_UNROLLED_OPERATORS`` copied operators, is refused with a message naming the WHILE.
"""

from __future__ import annotations

import copy
import dataclasses

from microbuild.compiler.folding import fold_operator
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator, Subgraph, Tensor

# Beyond this many copied operators a loop is not "a few time steps" any more: the generated
# code would be huge, so it is refused rather than unrolled.
MAX_UNROLLED_OPERATORS = 20_000


def unroll_while_loops(graph: Graph) -> Graph:
    """The graph with every WHILE replaced by its unrolled iterations (the input graph is not
    modified); a graph without WHILE is returned as it is."""
    if not any(op.opcode == "WHILE" for op in graph.operators):
        return graph
    work = Graph(tensors=list(graph.tensors), operators=[], inputs=list(graph.inputs),
                 outputs=list(graph.outputs), description=graph.description,
                 subgraph_count=graph.subgraph_count, source=graph.source,
                 notes=list(graph.notes))
    renamed: dict[int, int] = {}  # a WHILE's output -> the tensor holding its final value
    unrolled: set[int] = set()
    steps = []
    for op in graph.operators:
        op = copy.copy(op)
        op.inputs = [renamed.get(t, t) for t in op.inputs]
        cond = graph.subgraphs.get(op.options.get("cond_subgraph_index"))
        body = graph.subgraphs.get(op.options.get("body_subgraph_index"))
        if op.opcode != "WHILE" or cond is None or body is None:
            # (a WHILE without its subgraphs is left for validate.py to refuse)
            work.operators.append(op)
            continue
        results, n = _unroll(op, cond, body, work)
        renamed.update(zip(op.outputs, results))
        unrolled.update((op.options["cond_subgraph_index"], op.options["body_subgraph_index"]))
        steps.append(f"{op.describe()} x{n}")
    work.outputs = [renamed.get(t, t) for t in work.outputs]
    if not unrolled:
        return graph
    work.subgraph_count -= len(unrolled)
    work.notes.append(f"WHILE loop(s) unrolled at compile time ({', '.join(steps)} iterations)")
    return work.replace_operators(work.operators)


def _unroll(loop: Operator, cond: Subgraph, body: Subgraph, work: Graph
            ) -> tuple[list[int], int]:
    """Append the iterations of ``loop`` to ``work.operators``; the tensors holding the loop's
    results and the number of iterations."""
    where = f"{work.source or 'model'}: {loop.describe()}"
    n_carried = len(loop.inputs)
    if not (len(cond.inputs) == len(body.inputs) == len(body.outputs) == len(loop.outputs)
            == n_carried) or len(cond.outputs) != 1:
        raise ModelError(f"{where}: it carries {n_carried} tensors but its subgraphs take "
                         f"{len(cond.inputs)} (condition) and {len(body.inputs)} -> "
                         f"{len(body.outputs)} (body); the file is damaged")
    cond_constants: dict[int, int] = {}
    body_constants: dict[int, int] = {}  # the body's weights: one copy for every iteration
    carried = list(loop.inputs)
    copied = 0
    for step in range(MAX_UNROLLED_OPERATORS + 1):
        scratch: list[Operator] = []
        (flag,) = _instantiate(cond, carried, work, scratch, cond_constants, loop, step)
        value = work.tensors[flag].data
        if scratch or value is None or value.size != 1:
            raise ModelError(
                f"{where}: whether the loop goes on depends on values known only at run time "
                f"(after {step} iteration(s)); microbuild unrolls WHILE loops whose trip count "
                "is known at compile time (as Keras' GRU/LSTM layers and tf.while_loop over a "
                "fixed range convert); for a recurrent layer, fix the sequence length and batch "
                "in the Input")
        if not bool(value.reshape(-1)[0]):
            return carried, step
        before = len(work.operators)
        carried = _instantiate(body, carried, work, work.operators, body_constants, loop, step)
        copied += len(work.operators) - before
        if copied > MAX_UNROLLED_OPERATORS:
            break
    raise ModelError(f"{where}: unrolling the loop would take over {MAX_UNROLLED_OPERATORS:,} "
                     f"operators ({step + 1}+ iterations); microbuild unrolls WHILE loops of a "
                     "few hundred time steps at most")


def _instantiate(sub: Subgraph, carried: list[int], work: Graph, out: list[Operator],
                 constants: dict[int, int], loop: Operator, step: int) -> list[int]:
    """Copy ``sub``'s operators into ``out`` reading ``carried``; operators whose result is
    known at compile time are evaluated instead of copied. Returns the tensors of the
    subgraph's outputs."""
    mapping = dict(zip(sub.inputs, carried))
    for j, tensor in enumerate(sub.tensors):
        if j not in mapping and tensor.is_constant:
            if j not in constants:
                constants[j] = _add_tensor(work, tensor, tensor.name)
            mapping[j] = constants[j]
    for sub_op in sub.operators:
        for t in sub_op.outputs:
            if t >= 0:
                mapping[t] = _add_tensor(work, dataclasses.replace(sub.tensors[t], data=None),
                                         f"{sub.tensors[t].name} (step {step})")
        unknown = [t for t in sub_op.inputs if t >= 0 and t not in mapping]
        if unknown:
            raise ModelError(f"{work.source or 'model'}: {loop.describe()}: the loop's "
                             f"{sub_op.opcode} reads tensor {unknown[0]}, which nothing in its "
                             "subgraph writes; the file is damaged")
        op = Operator(index=len(out), opcode=sub_op.opcode, version=sub_op.version,
                      inputs=[mapping[t] if t >= 0 else -1 for t in sub_op.inputs],
                      outputs=[mapping[t] if t >= 0 else -1 for t in sub_op.outputs],
                      options=dict(sub_op.options), model_index=loop.model_index)
        if not fold_operator(op, work):
            out.append(op)
    return [mapping[t] for t in sub.outputs]


def _add_tensor(work: Graph, tensor: Tensor, name: str) -> int:
    index = len(work.tensors)
    work.tensors.append(dataclasses.replace(tensor, index=index, name=name))
    return index
