"""Outputs written over the inputs they consume: the streaming distance, the planner's
placements in bytes, the verifier, and bit-exactness with TFLM (microbuild/compiler/overlap.py)."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact

from microbuild.compiler import compile_model
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.overlap import Window, window_distance
from microbuild.compiler.plan_check import plan_svg, verify_plan
from microbuild.compiler.planner import Location, plan_memory
from microbuild.compiler.prepare import prepare_graph
from microbuild.compiler.variants import REFERENCE, Selection, Target
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models"
CHAIN = MODELS / "ops" / "chain_overlap_trained_pc.tflite"
SHARED = MODELS.parent.parent.parent / "shared" / "models"
M7 = Target("cortex-m7", frozenset({"dsp"}))
M55 = Target("cortex-m55", frozenset({"dsp", "mve"}))


# ---- the distance, against a simulation of the kernels' reads and writes ----------------------
def _hazard(w: Window, kh: int, kw: int, distance: int, group: int, blocks: int) -> bool:
    """Run the loop nest a streaming kernel runs (output pixels in order, ``group`` at a time;
    per block of output channels every pixel of the group reads its whole clipped window, then
    writes that block) with the output ``distance`` bytes below the input; True when a read
    finds a byte the output already overwrote."""
    in_bytes = w.batches * w.in_h * w.in_w * w.in_pixel
    written = np.zeros(distance + in_bytes + 1, dtype=bool)  # addresses from the output's start
    pixels = w.batches * w.out_h * w.out_w
    block = -(-w.out_pixel // blocks)
    for g in range(0, pixels, group):
        members = range(g, min(g + group, pixels))
        for c0 in range(0, w.out_pixel, block):
            for p in members:
                b, rest = divmod(p, w.out_h * w.out_w)
                oy, ox = divmod(rest, w.out_w)
                y0, x0 = oy * w.stride_h - w.pad_top, ox * w.stride_w - w.pad_left
                for y in range(max(y0, 0), min(y0 + kh, w.in_h)):
                    lo = (b * w.in_h * w.in_w + y * w.in_w + max(x0, 0)) * w.in_pixel
                    hi = (b * w.in_h * w.in_w + y * w.in_w + min(x0 + kw, w.in_w)) * w.in_pixel
                    if hi > lo and written[distance + lo:distance + hi].any():
                        return True
            for p in members:
                start = p * w.out_pixel + c0
                end = min(start + block, (p + 1) * w.out_pixel)
                written[max(start, 0):max(end, 0)] = True
    return False


# (window, filter h, filter w): pointwise widening and narrowing, 3x3 same, strided, DS-CNN's
# first layer (10x4, stride 2, asymmetric padding), a depth multiplier, a pooling window, batch 2.
CASES = {
    "pointwise_8_to_16": (Window(1, 6, 5, 8, 6, 5, 16), 1, 1),
    "pointwise_16_to_8": (Window(1, 6, 5, 16, 6, 5, 8), 1, 1),
    "3x3_same": (Window(1, 7, 6, 4, 7, 6, 4, 1, 1, 1, 1), 3, 3),
    "3x3_same_stride2": (Window(1, 8, 8, 4, 4, 4, 8, 2, 2, 0, 0), 3, 3),
    "10x4_stride2_dscnn": (Window(1, 13, 6, 1, 7, 3, 8, 2, 2, 4, 1), 10, 4),
    "dw_multiplier2": (Window(1, 5, 5, 3, 5, 5, 6, 1, 1, 1, 1), 3, 3),
    "pool_2x2_valid_s2": (Window(1, 6, 6, 4, 3, 3, 4, 2, 2, 0, 0), 2, 2),
    "batch2_3x3": (Window(2, 4, 4, 2, 4, 4, 2, 1, 1, 1, 1), 3, 3),
}


@pytest.mark.parametrize("name", CASES)
def test_the_distance_is_safe_and_tight_for_one_pixel_at_a_time(name):
    w, kh, kw = CASES[name]
    d = window_distance(w, 1)
    for blocks in (1, 3):
        assert not _hazard(w, kh, kw, d, group=1, blocks=blocks)
    # Pixel granularity: a kernel may write any part of a pixel before its last read for it,
    # so the distance is at most one output pixel over what this loop nest needs.
    assert _hazard(w, kh, kw, d - w.out_pixel, group=1, blocks=3), "more than a pixel over"


@pytest.mark.parametrize("name", CASES)
def test_the_distance_is_safe_for_two_pixels_at_a_time(name):
    w, kh, kw = CASES[name]
    d = window_distance(w, 2)
    assert d >= window_distance(w, 1)
    assert not _hazard(w, kh, kw, d, group=2, blocks=3)


def test_known_distances():
    # Pointwise 48x48x8 -> 48x48x16 (person detection): the output may share all but the
    # 18,432 extra output bytes and one input pixel.
    assert window_distance(Window(1, 48, 48, 8, 48, 48, 16)) == 18_432 + 8
    # 3x3 same depthwise on 25x5x64 (DS-CNN): one row and two pixels.
    assert window_distance(Window(1, 25, 5, 64, 25, 5, 64, 1, 1, 1, 1)) == (5 + 2) * 64


# ---- the planner, in bytes ------------------------------------------------------------------
def _chain_graph():
    return prepare_graph(read_model(CHAIN))


def _reference(graph):
    return [REGISTRY[op.opcode] for op in graph.operators]


def test_chain_placements_in_bytes():
    graph = _chain_graph()
    plan = plan_memory(graph, _reference(graph))
    assert verify_plan(graph, plan) == []
    apart = plan_memory(graph, _reference(graph), share=False)
    # Tensors: input 12x12x8 (1152), 12x12x16 (2304) twice, 12x12x24 (3456), 6x6x24 (864)
    # twice, 6x6x12 (432), 3x3x12 (108). Apart, the widening pointwise needs 2304 + 3456 bytes;
    # overlapping, the depthwise output (2304) starts 1168 bytes (3456 - 2304 + one 16-byte
    # pixel) above the pointwise output and the peak is that pair plus the stride-2 depthwise's
    # one pixel below it: 16 + 1168 + 2304 + the row of the 3x3 depthwise before it (224).
    assert apart.workspace_bytes == 2304 + 3456
    assert [(op, d) for op, _, _, d, _ in plan.overlaps] == [(1, 224), (2, 1168), (3, 24)]
    assert plan.workspace_bytes == 3728
    out = {op: graph.operators[op].outputs[0] for op, *_ in plan.overlaps}
    for op, src, dst, d, _ in plan.overlaps:
        assert out[op] == dst and graph.operators[op].inputs[0] == src
        assert plan.locations[src].offset - plan.locations[dst].offset >= d
        # and they do share bytes
        assert plan.locations[dst].offset + graph.tensors[dst].nbytes > plan.locations[src].offset


def test_share_off_means_no_overlap():
    graph = _chain_graph()
    plan = plan_memory(graph, _reference(graph), share=False)
    assert plan.overlaps == [] and verify_plan(graph, plan) == []


def test_the_dsp_depthwise_overlaps_by_whole_pixels_only():
    model = compile_model(CHAIN, selection=Selection(M7))
    kernels = [op["kernel"] for op in model.ops]
    assert kernels[1] == kernels[3] == "dsp" and model.ops[1]["opcode"] == "DEPTHWISE_CONV_2D"
    assert verify_plan(model.graph, model.plan, model.lowerings) == []
    by_op = {op: (src, dst, d, pixel) for op, src, dst, d, pixel in model.plan.overlaps}
    assert by_op[3][3] == 24  # 6x6x24 from 12x12x24: 24-byte pixels
    for op, (src, dst, d, pixel) in by_op.items():
        gap = model.plan.locations[src].offset - model.plan.locations[dst].offset
        assert gap >= d and (pixel == 0 or gap % pixel == 0), (op, gap, d, pixel)


def test_a_kernel_that_does_not_stream_is_never_overlapped():
    from dataclasses import replace

    from microbuild.compiler.variants import BoundLowering

    model = compile_model(CHAIN, selection=Selection(M7))
    graph, lowerings = model.graph, list(model.lowerings)
    assert lowerings[1].overlap(graph.operators[1], graph, 0).pixel_bytes == 16
    assert lowerings[1].overlap(graph.operators[1], graph, 1) is None  # the filter
    # The same DSP depthwise kernel, had it not walked pixels in order: op 1 is kept apart.
    assert any(op == 1 for op, *_ in model.plan.overlaps)
    lowerings[1] = BoundLowering(lowerings[1].lowering,
                                 replace(lowerings[1].variant, overlap_group=0))
    assert lowerings[1].overlap(graph.operators[1], graph, 0) is None
    plan = plan_memory(graph, lowerings)
    assert not any(op == 1 for op, *_ in plan.overlaps)
    assert verify_plan(graph, plan, lowerings) == []
    # Lowerings without a streaming kernel (the fused CONV_2D+ADD, softmax, FC) say None.
    for opcode in ("CONV_2D+ADD", "SOFTMAX", "FULLY_CONNECTED"):
        assert REGISTRY[opcode].overlap(graph.operators[0], graph, 0) is None


def test_verifier_catches_an_output_too_close_to_its_input():
    graph = _chain_graph()
    plan = plan_memory(graph, _reference(graph))
    op, src, dst, d, _ = plan.overlaps[1]
    broken = copy.deepcopy(plan)
    # Move the output up: one 16-byte step short of the distance below its input.
    short = d - 16 if d % 16 == 0 else d // 16 * 16
    broken.locations[dst] = Location(plan.locations[src].offset - short)
    gap = broken.locations[src].offset - broken.locations[dst].offset
    assert gap < d
    problems = verify_plan(graph, broken)
    assert any(f"op {op}" in p and "overlapping needs at least" in p for p in problems), problems


def test_verifier_catches_an_overlap_claim_on_an_op_that_cannot():
    graph = _chain_graph()
    plan = plan_memory(graph, _reference(graph))
    broken = copy.deepcopy(plan)
    last = graph.operators[-1]  # MAX_POOL_2D at the end: claim it for another op's tensors
    op, src, dst, d, px = plan.overlaps[0]
    broken.overlaps.append((op, dst, last.outputs[0], d, px))
    assert any(f"may not write its output tensor {last.outputs[0]}" in p
               for p in verify_plan(graph, broken))


def test_plan_svg_draws_overlapping_buffers_translucent_and_says_so():
    model = compile_model(CHAIN)
    svg = model.plan_svg()
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    titles = [r.find(f"{ns}title").text for r in root.iter(f"{ns}rect")
              if r.find(f"{ns}title") is not None]
    assert sum("writes it over" in t for t in titles) == len(model.plan.overlaps) > 0
    for r in root.iter(f"{ns}rect"):
        if r.find(f"{ns}title") is not None:
            assert float(r.get("fill-opacity")) < 0.8  # the overlapped bytes show through


# ---- bit-exact with TFLM ----------------------------------------------------------------------
@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("kernels", ["default", "reference"])
def test_the_trained_like_chain_is_bit_exact_written_over_itself(cc, kernels, tmp_path):
    variants = {"*": REFERENCE} if kernels == "reference" else None
    # Op by op: the reference kernels would stream the chain's first layers instead (row_stream.py).
    model = compile_model(CHAIN, selection=Selection(force=variants) if variants else None,
                          row_stream=False)
    assert len(model.plan.overlaps) >= 3
    assert_bit_exact(CHAIN, n=12, seed=7, cc=cc, tmp_path=tmp_path, variants=variants)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("name", ["ds_cnn", "mobilenet_v1_025_vww"])
def test_test_models_overlap_and_stay_bit_exact_with_reference_kernels(name, cc, tmp_path):
    path = MODELS / f"{name}.tflite"
    model = compile_model(path, selection=Selection(force={"*": REFERENCE}))
    assert model.plan.overlaps
    assert verify_plan(model.graph, model.plan, model.lowerings) == []
    assert_bit_exact(path, n=4, seed=13, cc=cc, tmp_path=tmp_path, variants={"*": REFERENCE})


# Workspace (bytes, generic CPU's default kernels) against TFLM's smallest arena, measured with
# the tflite-micro wheel (benchmarks/results/memory.md).
FLOOR = {"ds_cnn": (24_208, 0.5), "mobilenet_v1_025_vww": (103_536, 0.5)}


@pytest.mark.parametrize("name", FLOOR)
def test_workspace_is_at_most_half_of_tflms_arena(name):
    arena, ratio = FLOOR[name]
    for target in (Target(), M7, M55):
        model = compile_model(MODELS / f"{name}.tflite", selection=Selection(target))
        assert verify_plan(model.graph, model.plan, model.lowerings) == []
        assert model.workspace_bytes <= ratio * arena, (target, model.workspace_bytes)


def test_vww_peak_is_the_widening_pointwise_pair():
    # 48x48x8 -> 48x48x16 pointwise: 36,864 + 16 bytes (one input pixel, aligned) below the
    # input, and the stride-2 depthwise after it one 16-byte pixel below that: not the 46,080 of
    # the input image beside the first layer's output, nor 55,296 for the pair apart.
    # Op by op (streamed row by row, the pair never exists whole: test_row_stream.py).
    model = compile_model(MODELS / "mobilenet_v1_025_vww.tflite", row_stream=False)
    assert model.workspace_bytes == 36_864 + 16 + 16
    before = plan_memory(model.graph, model.lowerings, overlap=False)
    assert before.workspace_bytes == 18_432 + 36_864


@pytest.mark.skipif(not (SHARED / "person_detect.tflite").exists(),
                    reason="../shared/models/person_detect.tflite is absent (a user's clone)")
def test_person_detect_pointwise_shares_its_input():
    model = compile_model(SHARED / "person_detect.tflite")
    graph, plan = model.graph, model.plan
    # The 48x48x8 -> 48x48x16 pointwise convolution: 36,864 + 16 bytes, not 55,296.
    assert plan.workspace_bytes <= 36_864 + 64
    assert plan.workspace_bytes <= 0.5 * 85_264
    assert verify_plan(graph, plan, model.lowerings) == []


# ---- PAD ----------------------------------------------------------------------------------------
def _pad_hazard(shape, paddings, distance: int) -> bool:
    """PAD's walk (output in order; each input element read just before it is written) with the
    output ``distance`` elements below the input: True when a read finds an overwritten one."""
    inside = np.pad(np.ones(shape, dtype=bool), paddings).reshape(-1)
    written = np.zeros(distance + int(np.prod(shape)) + 1, dtype=bool)
    read = 0
    for o, copied in enumerate(inside):
        if copied:
            if written[distance + read]:
                return True
            read += 1
        if o < written.size:
            written[o] = True
    return False


@pytest.mark.parametrize("shape,paddings", [
    ((1, 4, 5, 3), ((0, 0), (1, 2), (0, 3), (0, 0))),
    ((1, 3, 3, 2), ((0, 0), (1, 1), (1, 1), (1, 0))),
    ((2, 6), ((1, 0), (2, 2))),
])
def test_pad_distance_is_safe_and_the_smallest(shape, paddings):
    from microbuild.compiler.overlap import pad_distance

    d = pad_distance(shape, paddings, itemsize=1)
    assert not _pad_hazard(shape, paddings, d)
    assert _pad_hazard(shape, paddings, d - 1)
    assert pad_distance(shape, paddings, itemsize=2) == 2 * d  # int16: bytes


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_pad_then_conv_overlaps_and_is_bit_exact(cc, tmp_path):
    path = MODELS / "ops" / "pad_then_conv.tflite"
    model = compile_model(path)
    ops = {op: model.graph.operators[op].opcode for op, *_ in model.plan.overlaps}
    assert "PAD" in ops.values(), ops
    assert verify_plan(model.graph, model.plan, model.lowerings) == []
    assert_bit_exact(path, n=6, seed=3, cc=cc, tmp_path=tmp_path)


# ---- float32 CONV_2D, DEPTHWISE_CONV_2D and pooling (spatial_f32.c) ----------------------------
FLOAT_SPATIAL = ("conv_same_relu", "conv_valid_stride2_nobias", "conv_dilated_relu6",
                 "conv_pointwise_grouped", "depthwise_same", "depthwise_mult2_stride2_relu",
                 "depthwise_valid_dilated", "average_pool_same", "max_pool_valid")


@pytest.mark.parametrize("name", FLOAT_SPATIAL)
def test_float_spatial_output_lies_over_its_input_and_no_read_finds_it_overwritten(name):
    # spatial_f32.c walks output pixels in order; per pixel, CONV_2D and DEPTHWISE_CONV_2D read
    # the window again for every 4 output channels and write those 4, pooling for every
    # channel. Replay that loop nest at the planned offsets: no read may find an output byte.
    # (The bytes themselves: test_ops_float.py runs these models bit-exact with TFLM with this
    # plan.)
    from microbuild.compiler.overlap import sliding_window

    model = compile_model(MODELS / "float" / f"{name}.tflite")
    graph, plan = model.graph, model.plan
    assert verify_plan(graph, plan, model.lowerings) == []
    (op_index, src, dst, distance, _), = plan.overlaps
    op = graph.operators[op_index]
    x, out = graph.tensor(src), graph.tensor(dst)
    assert plan.workspace_bytes < x.nbytes + out.nbytes
    if op.opcode.endswith("POOL_2D"):
        kh, kw = op.options["filter_height"], op.options["filter_width"]
        blocks = out.shape[3]
    else:
        w = graph.tensor(op.inputs[1])
        kh, kw = w.shape[1], w.shape[2]
        blocks = -(-out.shape[3] // 4)
    window = sliding_window(op, graph, kh, kw)
    d = int(op.options.get("dilation_h_factor", 1)), int(op.options.get("dilation_w_factor", 1))
    # The replay reads a dense kh x kw window: a dilated one spans (k - 1) * d + 1 taps (the
    # extra taps only widen the reads, so a clean replay stays a proof).
    kh, kw = (kh - 1) * d[0] + 1, (kw - 1) * d[1] + 1
    gap = plan.locations[src].offset - plan.locations[dst].offset
    assert gap >= distance
    # (_hazard itself finds clobbered reads: test_the_distance_is_safe_and_tight_... above.)
    assert not _hazard(window, kh, kw, gap, group=1, blocks=blocks)


def test_float_convolutions_meet_issue_26s_workspace_ratio():
    # Issue 26: the float models' workspace <= 0.6x TFLM's arena (its arena_used_bytes on the
    # anchor firmwares, benchmarks/results/memory.md). conv_valid_stride2_nobias's input alone
    # is 2,304 of its 3,520 bytes (0.65x): the floor, reached (one 32-byte gap more).
    arenas = {"conv_same_relu": 1_824, "depthwise_same": 1_776,
              "depthwise_mult2_stride2_relu": 2_048}
    for name, arena in arenas.items():
        assert compile_model(MODELS / "float" / f"{name}.tflite").workspace_bytes <= 0.6 * arena
    model = compile_model(MODELS / "float" / "conv_valid_stride2_nobias.tflite")
    assert model.workspace_bytes == 2_304 + 32


# ---- UNIDIRECTIONAL_SEQUENCE_LSTM (int8 / 16x8: lstm.c, lstm_dsp.c, lstm_mve.c) ------------------
@pytest.mark.skipif(not (SHARED / "micro_speech_lstm.tflite").exists(),
                    reason="../shared/models is absent (a user's clone)")
@pytest.mark.parametrize("name", ["micro_speech_lstm", "trained_lstm_int8"])
def test_int8_lstm_output_lies_over_its_input_and_no_step_reads_an_overwritten_byte(name):
    # A time step's output row goes one row (80 bytes for micro_speech_lstm's 49 x 257 -> 49 x
    # 80) below the input's start: 12,593 + 3,920 bytes become 12,688. Replayed in the Helium
    # kernel's order, the finest one (every 4 units re-read the step's whole input row, then
    # write their 4 outputs; lstm.c reads the row for all gates before writing the step's row),
    # no read may find an output byte. The bytes: test_ops_lstm.py (host) and
    # tests/firmware/test_shared_models_qemu.py (Cortex-M7, DSP) run these plans against TFLM.
    for target in (Target(), M7, M55):
        model = compile_model(SHARED / f"{name}.tflite", selection=Selection(target))
        graph, plan = model.graph, model.plan
        assert verify_plan(graph, plan, model.lowerings) == []
        (op_index, src, dst, distance, _), = plan.overlaps
        assert graph.operators[op_index].opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM"
        x, out = graph.tensor(src), graph.tensor(dst)
        rows, units = out.shape[0] * out.shape[1], out.shape[2]
        assert distance == out.nbytes // rows  # one output row
        gap = plan.locations[src].offset - plan.locations[dst].offset
        assert gap >= distance
        steps = Window(1, 1, rows, x.nbytes // rows, 1, rows, out.nbytes // rows)
        assert not _hazard(steps, 1, 1, gap, group=1, blocks=-(-units // 4))
        apart = plan_memory(graph, model.lowerings, overlap=False)
        assert plan.workspace_bytes <= apart.workspace_bytes - out.nbytes + distance + 16
