"""Make a graph read from a file into the graph the compiler lowers, the way TFLM sees it.

``prepare_graph`` runs, in order:

0. **WHILE loops unrolled** (:mod:`microbuild.compiler.while_loops`) where their trip count is
   known at compile time (Keras 3's GRU/LSTM layers).
0. **Data flow checked** (:mod:`microbuild.compiler.graph_check`): every run-time tensor written
   once, before it is read; variables only where stateful operators keep their state.
1. **Static shapes.** Converters write the batch dimension as -1 in ``shape_signature`` (a Keras
   ``Input`` has batch ``None``) while ``shape`` holds 1. TFLM allocates every tensor by ``shape``
   and never reads the signature, so neither does microbuild: such a tensor is compiled at
   ``shape`` and the summary says so once ("batch fixed to 1"). Only a shape TFLM itself could not
   allocate (a negative dimension in ``shape``) is refused.
2. **Quantization parameters.** Every scale and zero point an operator could read is checked the
   way TFLM's kernels would need it (finite, positive scale; zero point inside the type; one
   scale per channel along an existing axis), so a damaged or hand-edited file gets a message,
   not a traceback from the arithmetic later.
3. **Constant folding** (:mod:`microbuild.compiler.folding`): operators whose inputs are known at
   compile time become constants (the SHAPE -> STRIDED_SLICE -> PACK chain of an open batch
   included: it is evaluated, not merely dropped).
4. **Operands no kernel reads detached** (RESHAPE's shape operand when it could not be
   evaluated: the output shape is static), so the computations feeding them become dead code.
5. **Layout transposes folded into weights** (:mod:`microbuild.compiler.transpose_folding`): the
   TRANSPOSE a PyTorch export puts before ``flatten`` + ``Linear`` becomes a permutation of the
   FULLY_CONNECTED's weight columns.
5b. **int8 FULLY_CONNECTED with run-time weights as BATCH_MATMUL**
   (:mod:`microbuild.compiler.fc_runtime_weights`): litert-torch's attention products.
6. **Dilated convolutions fused** (:mod:`microbuild.compiler.dilated_conv`): the converter's
   SPACE_TO_BATCH_ND -> CONV_2D -> BATCH_TO_SPACE_ND pattern becomes one dilated convolution.
7. **One-channel depthwise convolutions as convolutions**
   (:mod:`microbuild.compiler.single_channel_depthwise`): the same sums, taken by the
   convolution's fast kernels (the depthwise ones need depth multiplier 1).
8. **Pruned channels' biases shrunk** (:mod:`microbuild.compiler.pruned_channels`): a channel with
   an all-zero filter outputs its requantized bias; the smallest bias with the same output
   replaces a huge one, so fast kernels are not refused the layer.
9. **Dead operators removed**: what no graph output depends on.

The input graph is not modified: tensors are copied before anything is changed.
"""

from __future__ import annotations

import copy

from microbuild.compiler.dilated_conv import fuse_dilated_convolutions
from microbuild.compiler.fc_runtime_weights import runtime_weight_fully_connected_as_batch_matmul
from microbuild.compiler.folding import fold_constants, remove_dead_operators
from microbuild.compiler.graph_check import check_data_flow
from microbuild.compiler.pruned_channels import shrink_pruned_channel_biases
from microbuild.compiler.single_channel_depthwise import depthwise_single_channel_as_conv
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.ops.variables import quantize_variables
from microbuild.compiler.quant_check import quantization_problem
from microbuild.compiler.transpose_folding import fold_transposes_into_weights
from microbuild.compiler.while_loops import unroll_while_loops
from microbuild.errors import ModelError
from microbuild.model.ir import Graph


def prepare_graph(graph: Graph) -> Graph:
    """Static shapes, checked quantization, constants folded, dead operators removed."""
    graph = unroll_while_loops(graph)
    check_data_flow(graph)  # the passes below and the planner rely on a well-formed data flow
    graph = _copy_tensors(graph)
    _name_custom_operators(graph)
    quantize_variables(graph)
    _apply_static_shapes(graph)
    check_quantization(graph)
    graph = fold_constants(graph)
    _drop_unread_inputs(graph)
    graph = fold_transposes_into_weights(graph)
    graph = runtime_weight_fully_connected_as_batch_matmul(graph)
    graph = fuse_dilated_convolutions(graph)
    graph = depthwise_single_channel_as_conv(graph)
    graph = shrink_pruned_channel_biases(graph)
    return remove_dead_operators(graph)


def _copy_tensors(graph: Graph) -> Graph:
    tensors = [copy.copy(t) for t in graph.tensors]
    operators = [copy.copy(op) for op in graph.operators]
    for op in operators:
        op.options = dict(op.options)
    result = Graph(tensors=tensors, operators=operators, inputs=list(graph.inputs),
                   outputs=list(graph.outputs), description=graph.description,
                   subgraph_count=graph.subgraph_count, source=graph.source,
                   notes=list(graph.notes))
    return result


def _name_custom_operators(graph: Graph) -> None:
    """A CUSTOM operator whose custom code microbuild has a lowering for (``custom = True``)
    takes that code as its opcode, so the rest of the compiler finds the lowering like a
    builtin's; its private state (if any) becomes a variable tensor (``add_state``)."""
    for op in graph.operators:
        if op.opcode != "CUSTOM":
            continue
        lowering = REGISTRY.get(str(op.options.get("custom_code")))
        if lowering is not None and lowering.custom:
            op.opcode = lowering.opcode
            lowering.add_state(op, graph)


def _drop_unread_inputs(graph: Graph) -> None:
    """Detach operands no kernel reads (RESHAPE's shape when folding could not evaluate it), so
    what computes them can die."""
    for op in graph.operators:
        lowering = REGISTRY.get(op.opcode)
        if lowering is not None and op.inputs:
            op.inputs = lowering.used_inputs(op, graph)


def _used_tensors(graph: Graph) -> list[int]:
    used = set(graph.inputs) | set(graph.outputs)
    for op in graph.operators:
        used.update(t for t in op.inputs + op.outputs if t >= 0)
    return sorted(used)


def _apply_static_shapes(graph: Graph) -> None:
    """Compile every tensor at its ``shape``, as TFLM allocates it; refuse impossible shapes."""
    where = graph.source or "model"
    problems = []
    fixed: dict[int, set[int]] = {}  # dimension -> the sizes ``shape`` gives it where it is open
    for t in _used_tensors(graph):
        tensor = graph.tensors[t]
        if any(d < 0 for d in tensor.shape):
            problems.append(f"tensor {t} '{tensor.name}' has shape {list(tensor.shape)}: a "
                            "negative dimension, which TFLM cannot allocate either")
            continue
        signature = tensor.shape_signature or ()
        if len(signature) == len(tensor.shape):
            for k, (d, s) in enumerate(zip(tensor.shape, signature)):
                if s < 0:
                    fixed.setdefault(k, set()).add(int(d))
        tensor.shape_signature = None
    if problems:
        raise ModelError(f"{where}: cannot compile this model:\n" +
                         "\n".join(f"  {p}" for p in problems) +
                         "\nhint: give the model fixed shapes before converting "
                         "(e.g. tf.keras.Input(shape=..., batch_size=1))")
    if fixed:
        parts = []
        for k, sizes in sorted(fixed.items()):
            name = "batch" if k == 0 else f"dimension {k}"
            parts.append(f"{name} fixed to {'/'.join(str(s) for s in sorted(sizes))}")
        graph.notes.append(f"{', '.join(parts)} (open in the model's shape_signature; TFLM "
                           "allocates the tensors' shapes too)")


def check_quantization(graph: Graph) -> None:
    """Refuse, in one message, every quantization parameter TFLM's kernels could not use."""
    where = graph.source or "model"
    problems = []
    for t in _used_tensors(graph):
        tensor = graph.tensors[t]
        problem = quantization_problem(tensor)
        if problem:
            problems.append(f"tensor {t} '{tensor.name}': {problem}")
    if problems:
        shown = problems[:20]
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ModelError(f"{where}: the model's quantization parameters are invalid:\n" +
                         "\n".join(f"  {p}" for p in shown) + more +
                         "\nhint: the file is damaged or was edited by hand; convert the model "
                         "again")
