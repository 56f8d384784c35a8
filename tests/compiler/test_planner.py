"""The memory planner and its independent verifier."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from microbuild.compiler import compile_model
from microbuild.compiler.variants import REFERENCE, Selection, Target
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.plan_check import plan_svg, verify_plan
from microbuild.compiler.planner import Location, plan_memory
from microbuild.compiler.prepare import prepare_graph
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator, Quantization, Tensor
from microbuild.model.reader import read_model

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


def _compilable_models() -> list[Path]:
    found = []
    for path in sorted(MODELS_DIR.glob("*.tflite")) + sorted((MODELS_DIR / "ops").glob("*.tflite")):
        try:
            compile_model(path)
        except ModelError:
            continue  # the deliberately unsupported models
        found.append(path)
    return found


COMPILABLE = _compilable_models()


def _lowerings(graph: Graph):
    return [REGISTRY[op.opcode] for op in graph.operators]


def test_the_committed_models_are_covered():
    names = {p.name for p in COMPILABLE}
    assert "fc_reshape_chain.tflite" in names and len(COMPILABLE) >= 10


@pytest.mark.parametrize("path", COMPILABLE, ids=lambda p: p.stem)
def test_never_worse_than_greedy_by_size_and_verified(path):
    graph = prepare_graph(read_model(path))  # the graph the planner sees: constants folded
    plan = plan_memory(graph, _lowerings(graph))
    greedy = plan_memory(graph, _lowerings(graph), share=False, orderings=("size",),
                         fits=("first",))
    assert verify_plan(graph, plan) == []
    assert verify_plan(graph, greedy) == []
    assert plan.workspace_bytes <= greedy.workspace_bytes
    # No plan can beat the largest set of tensors alive at one op (aliases counted once).
    assert plan.workspace_bytes >= max([b.size for b in plan.buffers] + [0])


def _int8(index: int, n: int, name: str = "") -> Tensor:
    return Tensor(index=index, name=name or f"t{index}", shape=(1, n), dtype="int8",
                  quant=Quantization(np.array([1 / 256]), np.array([-128])))


def _softmax_chain(n_ops: int, size: int) -> Graph:
    """in -> SOFTMAX -> SOFTMAX -> ... -> out: every intermediate can reuse its input's bytes."""
    tensors = [_int8(i, size) for i in range(n_ops + 1)]
    ops = [Operator(index=i, opcode="SOFTMAX", version=1, inputs=[i], outputs=[i + 1],
                    options={"beta": 1.0}) for i in range(n_ops)]
    return Graph(tensors=tensors, operators=ops, inputs=[0], outputs=[n_ops])


def test_in_place_reuses_the_dying_input():
    graph = _softmax_chain(4, 100)
    plan = plan_memory(graph, _lowerings(graph))
    greedy = plan_memory(graph, _lowerings(graph), share=False, orderings=("size",),
                         fits=("first",))
    # The input and output live in the workspace too, so every op writes over its input.
    assert plan.in_place == [(0, 0, 1), (1, 1, 2), (2, 2, 3), (3, 3, 4)]
    assert plan.workspace_bytes == 112  # t0..t4 in one 16-byte-aligned buffer of 100
    assert greedy.workspace_bytes == 224
    assert verify_plan(graph, plan) == []


def test_in_place_is_refused_when_the_input_is_read_later():
    graph = _softmax_chain(3, 64)
    # op 2 also reads t1, so op 1 must not overwrite it.
    graph.operators[2].inputs = [2, 1]
    plan = plan_memory(graph, _lowerings(graph))
    assert all(op != 1 for op, _, _ in plan.in_place)
    assert verify_plan(graph, plan) == []


def test_reshape_aliases_its_input():
    graph = read_model(MODELS_DIR / "ops" / "fc_reshape_chain.tflite")
    plan = plan_memory(graph, _lowerings(graph))
    assert len(plan.aliases) == 2
    for op_index, src, dst in plan.aliases:
        assert graph.operators[op_index].opcode == "RESHAPE"
        assert plan.locations[src] == plan.locations[dst]


def test_verifier_catches_overlapping_tensors():
    graph = _softmax_chain(4, 100)
    plan = plan_memory(graph, _lowerings(graph), share=False)
    broken = copy.deepcopy(plan)
    # Put t2 on top of t1 although both are alive at op 1 and no in-place claim covers it.
    broken.locations[2] = broken.locations[1]
    problems = verify_plan(graph, broken)
    assert any("overlaps" in p and "tensor 1" in p and "tensor 2" in p for p in problems)


def test_verifier_catches_out_of_workspace_and_false_claims():
    graph = _softmax_chain(4, 100)
    plan = plan_memory(graph, _lowerings(graph))
    broken = copy.deepcopy(plan)
    broken.locations[1] = Location(offset=plan.workspace_bytes)
    assert any("outside the workspace" in p for p in verify_plan(graph, broken))

    broken = copy.deepcopy(plan)
    broken.aliases.append((0, 0, 1))  # SOFTMAX does not alias; t1 is not in the input buffer
    problems = verify_plan(graph, broken)
    assert any("cannot alias" in p for p in problems)



def test_verifier_keeps_graph_outputs_alive_to_the_end():
    graph = _softmax_chain(4, 100)
    graph.outputs = [2, 4]  # t2 is produced at op 1 but read by the caller after op 3
    plan = plan_memory(graph, _lowerings(graph))
    assert verify_plan(graph, plan) == []
    assert all(src != 2 for _, src, _ in plan.in_place)
    broken = copy.deepcopy(plan)
    broken.locations[3] = broken.locations[2]  # t3 (written at op 2) on top of output t2
    assert any("overlaps" in p and "tensor 2" in p for p in verify_plan(graph, broken))


def test_plan_svg_is_valid_xml_with_one_rectangle_per_buffer():
    model = compile_model(MODELS_DIR / "ops" / "fc_reshape_chain.tflite")
    svg = model.plan_svg()
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    buffer_rects = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(buffer_rects) == len(model.plan.buffers) > 0
    texts = " ".join(t.text or "" for t in root.iter(f"{ns}text"))
    assert "operator index" in texts and "workspace offset" in texts
    # Standalone use, without a graph.
    ET.fromstring(plan_svg(model.plan))


# ---- fused CONV_2D+ADD (residual blocks) ------------------------------------------------------
RESIDUAL_MODELS = sorted((MODELS_DIR / "ops").glob("residual_*.tflite"))
RESNET8_TFLM_ARENA = 55_920  # TFLM's smallest working arena for resnet8, measured


def _fused(path):
    from microbuild.compiler.fusion import fuse_conv_add

    graph = fuse_conv_add(read_model(path))
    return graph, plan_memory(graph, _lowerings(graph))


def test_resnet8_residual_blocks_fuse_and_run_in_place():
    # The reference kernels need no scratch: the workspace is exactly the planner's tensors.
    # Op by op (row_stream=False): tests/compiler/test_row_stream.py covers the streamed plan.
    model = compile_model(MODELS_DIR / "resnet8.tflite",
                          selection=Selection(force={"*": REFERENCE}), row_stream=False)
    fused = [op for op in model.ops if op["opcode"] == "CONV_2D+ADD"]
    assert [op["fused_from"] for op in fused] == [[2, 3], [6, 7], [10, 11]]
    # Each fused op writes the sum over its residual operand (its last input).
    graph = model.graph
    for op in graph.operators:
        if op.opcode == "CONV_2D+ADD":
            assert (op.index, op.inputs[-1], op.outputs[0]) in model.plan.in_place
    assert verify_plan(graph, model.plan) == []
    # Peak: the first block's two live 32x32x16 activations (x, overwritten by the sum, and y).
    assert model.workspace_bytes == 2 * 32 * 32 * 16
    assert model.workspace_bytes <= 0.7 * RESNET8_TFLM_ARENA
    # The fast kernels' scratch (im2col columns) costs a little on top, never a second tensor.
    for target in (Target(), Target("cortex-m7", frozenset({"dsp"})),
                   Target("cortex-m55", frozenset({"dsp", "mve"}))):
        fast = compile_model(MODELS_DIR / "resnet8.tflite", selection=Selection(target),
                             row_stream=False)
        assert verify_plan(fast.graph, fast.plan, fast.lowerings) == []
        assert fast.workspace_bytes <= 2 * 32 * 32 * 16 + 4096, (target, fast.workspace_bytes)


@pytest.mark.parametrize("path", RESIDUAL_MODELS, ids=lambda p: p.stem)
def test_fused_plans_are_verified(path):
    graph, plan = _fused(path)
    assert verify_plan(graph, plan) == []
    fused = [op for op in graph.operators if op.opcode == "CONV_2D+ADD"]
    assert bool(fused) == (path.stem != "residual_shared_output")


def test_verifier_catches_a_broken_in_place_claim_on_input_k():
    graph, plan = _fused(MODELS_DIR / "ops" / "residual_identity_c8.tflite")
    (op_index, x, out), = plan.in_place
    op = graph.operators[op_index]
    assert op.opcode == "CONV_2D+ADD" and x == op.inputs[-1] and op_index == 2
    # Claiming the conv's input (input 0) instead of the residual operand is refused.
    y = op.inputs[0]
    broken = copy.deepcopy(plan)
    broken.in_place = [(op_index, y, out)]
    broken.locations[y] = broken.locations[out]
    assert any(f"input {len(op.inputs) - 1} -> output 0" in p for p in verify_plan(graph, broken))
    # A correct claim on input k becomes wrong once x is read after the op (here: it becomes a
    # graph output), and the planner then does not make it.
    later = copy.deepcopy(graph)
    later.outputs.append(x)
    assert any("still read" in p for p in verify_plan(later, plan))
    replanned = plan_memory(later, _lowerings(later))
    assert replanned.in_place == [] and verify_plan(later, replanned) == []


def test_mve_conv_with_a_fused_add_has_scratch_for_its_block_of_conv_values():
    """conv2d_mve.c requantizes 4 pixels x output_c conv values into scratch after the columns
    and runs the fused ADD on them from there (the output may be the residual operand itself,
    so they cannot go to the output first): 4 x output_c bytes more than the plain conv."""
    m55 = Target("cortex-m55", frozenset({"dsp", "mve"}))
    model = compile_model(MODELS_DIR / "resnet8.tflite", selection=Selection(m55),
                          row_stream=False)
    scratch = {tuple(op["fused_from"]): op["scratch_bytes"] for op in model.summary()["ops"]
               if op["opcode"] == "CONV_2D+ADD" and op["kernel"] == "mve"}
    # 3x3x16 -> 16: columns of 144 taps for 4 pixels, then 4 x 16; the 1x1 shortcuts read
    # their pixels in place: only 4 x 32 and 4 x 64.
    assert scratch == {(2, 3): 4 * 144 + 4 * 16, (6, 7): 4 * 32, (10, 11): 4 * 64}
    assert verify_plan(model.graph, model.plan, model.lowerings) == []
