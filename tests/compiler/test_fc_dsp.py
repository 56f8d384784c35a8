"""FULLY_CONNECTED dsp / dsp_wide fast path (runtime/kernels/fully_connected_dsp.c): the
compile-time requantization table and which models reach which path.

The kernels themselves run in QEMU against TFLM (tests/firmware/test_variants_qemu.py, every
variant on every sweep model, also at -O0 with MB_CONV2D_DSP_C_BLOCKS for the C form of the
assembly); the new sweep models come from tests/models/generate/ops_fc_dsp.py and are also
checked with the reference kernel by tests/compiler/test_ops_core.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from microbuild.boards import load_board
from microbuild.compiler import compile_model
from microbuild.compiler.ops.fully_connected import (dsp_requant_table, folded_bias,
                                                     requantization, widened_input_scratch)
from microbuild.compiler.quant import activation_range_int8
from microbuild.compiler.variants import Selection, Target
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models"
OPS = MODELS / "ops"
# The int8 ones (fc_s16_* are 16x8: the dsp_s16 variant, no table).
FC_MODELS = sorted(p for p in OPS.glob("fc_*.tflite") if "_s16" not in p.stem) + [
    MODELS / f"{name}.tflite" for name in ("anomaly_ae", "ds_cnn", "resnet8")]
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def _fc_ops(path: Path):
    graph = read_model(path)
    return graph, [op for op in graph.operators if op.opcode == "FULLY_CONNECTED"
                   and graph.tensor(op.inputs[0]).dtype == "int8"]


# ---- TFLM's requantization, written from its definitions (not from microbuild's C) -------------
def _srdhm(a: int, b: int) -> int:
    """SaturatingRoundingDoublingHighMul: (a * b + nudge) / 2^31, rounding toward zero."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    q = abs(ab + nudge) // (1 << 31)
    return q if ab + nudge >= 0 else -q


def _rounding_divide_by_pot(x: int, exponent: int) -> int:
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if (x & mask) > threshold else 0)


def _tflm(acc: int, multiplier: int, shift: int, zero_point: int, lo: int, hi: int) -> int:
    left, right = max(shift, 0), max(-shift, 0)
    value = _rounding_divide_by_pot(_srdhm(acc * (1 << left), multiplier), right) + zero_point
    return min(max(value, lo), hi)


# ---- the assembly's instructions on one table row ---------------------------------------------
def _i32(v: int) -> int:
    assert INT32_MIN <= v <= INT32_MAX, f"{v} overflows int32"
    return v


def _kernel(acc: int, row, lo: int, hi: int) -> int:
    m2, offset, shift = (int(v) for v in row)
    high = _i32(((acc << 32) + acc * m2 + (1 << 31)) >> 32)  # SMMLAR acc, acc, m2, acc
    t = _i32(_i32(offset + 2 * high) - (1 if high < 0 else 0))  # ADD ..., LSL #1; SUB ..., LSR #31
    out = min(max(t >> shift, -128), 127)  # ASR; SSAT #8
    return min(max(out, lo), hi)  # SSUB8 + SEL


@pytest.mark.parametrize("path", FC_MODELS, ids=lambda p: p.stem)
def test_table_requantization_equals_tflm_over_the_whole_sum_range(path):
    graph, ops = _fc_ops(path)
    rng = np.random.default_rng(5)
    checked = 0
    for op in ops:
        table = dsp_requant_table(op, graph)
        if table is None:
            continue
        w, y = graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
        out_depth, depth = w.shape
        multipliers, shifts = requantization(op, graph)
        if len(multipliers) == 1:
            multipliers, shifts = multipliers * out_depth, shifts * out_depth
        lo, hi = activation_range_int8(op.options.get("fused_activation_function", "NONE"),
                                       y.scale, y.zero_point)
        worst = int(np.abs(folded_bias(op, graph)).max()) + depth * 128 * 128
        for c in range(0, out_depth, max(1, out_depth // 16)):
            right = -shifts[c]
            # Random sums, the ends of the range and the rounding ties of both roundings.
            sums = list(rng.integers(-worst, worst + 1, 300)) + [-worst, worst, 0, 1, -1]
            for k in rng.integers(-2000, 2000, 40):
                sums += [int(k) * (1 << right) + (1 << max(right - 1, 0)) + d
                         for d in (-1, 0, 1)]
            for acc in sums:
                acc = int(min(max(acc, -worst), worst))
                assert _kernel(acc, table[3 * c:3 * c + 3], lo, hi) == _tflm(
                    acc, multipliers[c], shifts[c], y.zero_point, lo, hi), (path.stem, c, acc)
                checked += 1
    if path.stem != "fc_dsp_left_shift_pt":
        assert checked > 0


def test_which_models_get_the_table():
    """Every converter-made sweep model and the benchmark models get the short requantization;
    a left shift (multiplier above 1) does not, so the kernels take their generic path."""
    for path in FC_MODELS:
        graph, ops = _fc_ops(path)
        for op in ops:
            has_table = dsp_requant_table(op, graph) is not None
            assert has_table == (path.stem != "fc_dsp_left_shift_pt"), path.stem
    graph, (op,) = _fc_ops(OPS / "fc_dsp_left_shift_pt.tflite")
    assert requantization(op, graph)[1] == [1]


def test_the_sweep_reaches_every_path_of_the_fast_path():
    """Sweep models for: a depth not a multiple of 4 (generic path with the table), rows left
    over, single chunks before the 8-chunk loop, several input rows, a clamped activation on
    either side, a right shift of 1 (random inputs then hit the rounding ties the "- (hi < 0)"
    decides), and no table (generic requantization); the paths of the groups in both forms of
    the input, int8 and widened into scratch (depth at most 128, 2 groups or more)."""
    seen = set()
    for path in FC_MODELS:
        graph, ops = _fc_ops(path)
        for op in ops:
            w, x, y = (graph.tensor(op.inputs[1]), graph.tensor(op.inputs[0]),
                       graph.tensor(op.outputs[0]))
            out_depth, depth = w.shape
            chunks = depth // 4
            lo, hi = activation_range_int8(op.options.get("fused_activation_function", "NONE"),
                                           y.scale, y.zero_point)
            if dsp_requant_table(op, graph) is None:
                seen.add("no table")
                continue
            if depth % 4:
                seen.add("tail")
                continue
            form = "widened" if widened_input_scratch(op, graph) else "int8"
            assert widened_input_scratch(op, graph) in (0, 2 * depth)
            seen.add("left over rows" if out_depth % 4 else "groups only")
            if -1 in requantization(op, graph)[1]:
                seen.add("right shift 1")  # frequent rounding ties (fc_dsp_round_ties_pt)
            if chunks % 8 and chunks >= 8:
                seen.add(f"singles and eights, {form}")
            if x.num_elements // depth > 1:
                seen.add(f"batches, {form}")
            if lo > -128:
                seen.add(f"clamp below, {form}")
            if hi < 127:
                seen.add(f"clamp above, {form}")
    assert seen == {"no table", "tail", "left over rows", "groups only", "right shift 1"} | {
        f"{path}, {form}" for form in ("int8", "widened")
        for path in ("singles and eights", "batches", "clamp below")} | {
        "clamp above, widened"}


@pytest.mark.parametrize("variant", ["dsp", "dsp_wide"])
def test_the_dsp_variants_get_the_table_instead_of_the_multipliers(variant):
    target = Target.of_board(load_board("mps2-an500"))
    selection = Selection(target, force={"FULLY_CONNECTED": variant})
    model = compile_model(OPS / "fc_dsp_relu_clamp_pc.tflite", prefix="m", selection=selection)
    code, weights = model.sources["m.c"], model.sources["m_weights.c"]
    assert re.search(r"0, 0, NULL, NULL, m_op0_requant\n", code), code
    assert "m_op0_requant[18]" in weights and "multipliers" not in weights
    generic = compile_model(OPS / "fc_dsp_left_shift_pt.tflite", prefix="m", selection=selection)
    assert "requant" not in generic.sources["m_weights.c"]
    assert re.search(r"NULL, NULL, NULL\n", generic.sources["m.c"])
    # The reference kernel never gets it.
    plain = compile_model(OPS / "fc_dsp_relu_clamp_pc.tflite", prefix="m",
                          selection=Selection(force={"*": "reference"}))
    assert "requant" not in plain.sources["m_weights.c"]
