"""CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D, PAD, PADV2, MEAN and
CONCATENATION: every model from tests/models/generate/ops_conv.py, compiled to C with gcc and with
clang, must equal TFLM bit for bit on seeded random inputs. Plus unit tests of the compile-time
parameters that are easy to get subtly wrong (SAME padding, MEAN's multiplier) and of the
refusals.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact

from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.spatial import output_size, padding_before, window_2d
from microbuild.model.ir import Graph, Operator, Quantization, Tensor
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models" / "ops"
PREFIXES = ("conv_", "dw_", "avgpool_", "maxpool_", "pad_", "padv2_", "mean_", "concat_",
            "residual_")
MODEL_NAMES = sorted(p.stem for p in MODELS.glob("*.tflite") if p.stem.startswith(PREFIXES))


def test_models_present():
    # Guards against an empty sweep if the generator was not run.
    assert len(MODEL_NAMES) >= 49, MODEL_NAMES


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_bit_exact_with_tflm(name, cc, tmp_path):
    assert_bit_exact(MODELS / f"{name}.tflite", n=10, seed=0, cc=cc, tmp_path=tmp_path)


# ---- compile-time parameters ------------------------------------------------------------------
@pytest.mark.parametrize("in_size, filter_size, stride, dilation, padding, out, before, after", [
    (9, 3, 2, 1, "SAME", 5, 1, 0),    # total 2: split evenly
    (8, 3, 2, 1, "SAME", 4, 0, 1),    # total 1: TFLite puts the odd element at the end
    (8, 4, 2, 1, "SAME", 4, 1, 0),    # even filter
    (5, 5, 3, 1, "SAME", 2, 1, 1),    # total 3
    (10, 3, 1, 2, "SAME", 10, 2, 0),  # dilation 2: the filter spans 5
    (7, 1, 2, 1, "SAME", 4, 0, 0),    # 1x1 filter never pads
    (4, 1, 3, 1, "SAME", 2, 0, 0),    # stride beyond the filter: negative total means none
    (10, 3, 2, 1, "VALID", 4, 0, 0),  # VALID drops the partial window, no padding
    (9, 3, 1, 2, "VALID", 5, 0, 0),
])
def test_output_size_and_padding(in_size, filter_size, stride, dilation, padding, out, before,
                                 after):
    assert output_size(padding, in_size, filter_size, stride, dilation) == out
    assert padding_before(in_size, filter_size, stride, dilation, out) == (before, after)


def test_window_2d_reads_options():
    options = {"padding": "SAME", "stride_h": 2, "stride_w": 1, "dilation_h_factor": 1,
               "dilation_w_factor": 2}
    win = window_2d(options, in_h=8, in_w=7, filter_h=3, filter_w=3)
    # Height: out 4, total (4-1)*2+3-8 = 1 -> top 0. Width: dilated filter 5, out 7, total 4 -> 2.
    assert (win.out_h, win.out_w, win.pad_top, win.pad_left) == (4, 7, 0, 2)


WINDOW_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D")


@pytest.mark.parametrize("name", [n for n in MODEL_NAMES if n.startswith(
    ("conv_", "dw_", "avgpool_", "maxpool_"))])
def test_output_shapes_match_the_converter(name):
    """TensorFlow computed every output shape in these models; ours must agree."""
    graph = read_model(MODELS / f"{name}.tflite")
    for op in graph.operators:
        if op.opcode not in WINDOW_OPS:
            continue
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if op.opcode.endswith("POOL_2D"):
            fh, fw = op.options["filter_height"], op.options["filter_width"]
        else:
            w = graph.tensor(op.inputs[1])
            fh, fw = (w.shape[1], w.shape[2])
        win = window_2d(op.options, x.shape[1], x.shape[2], fh, fw)
        assert (win.out_h, win.out_w) == tuple(out.shape[1:3])


def test_per_tensor_models_have_one_filter_scale():
    """The generator's switch for per-tensor filters took effect (TF 2.21 defaults to per
    channel), so the *_pt models really test the per-tensor path."""
    names = [n for n in MODEL_NAMES if n.endswith("_pt")]
    assert len(names) >= 4
    for name in names:
        graph = read_model(MODELS / f"{name}.tflite")
        op = graph.operators[0]
        assert len(graph.tensor(op.inputs[1]).quant.scale) == 1, name
    graph = read_model(MODELS / "conv_3x3_same_s1_relu_pc.tflite")
    assert len(graph.tensor(graph.operators[0].inputs[1]).quant.scale) == 4


def test_mean_multiplier_folds_the_count():
    from microbuild.compiler.ops.mean import mean_multiplier

    # Equal scales, 25 elements: 2^30 (0.5 * 2^1) shifted left by floor(log2 25) = 4, divided by
    # 25, with the shift reduced by 4.
    assert mean_multiplier(0.5, 0.5, 25) == ((1 << 34) // 25, 1 - 4)
    # The pre-shift stops at 32 bits...
    assert mean_multiplier(1.0, 1.0, 1 << 40) == ((1 << 30 << 32) >> 40, 1 - 32)
    # ... and where the total right shift would pass 31 (a tiny scale ratio).
    m, s = mean_multiplier(2.0**-30, 1.0, 16)
    assert (m, s) == ((1 << 30 << 2) // 16, -31)
    # The result still represents input_scale / output_scale / count.
    m, s = mean_multiplier(0.0123, 0.0045, 49)
    assert m * 2.0 ** (s - 31) == pytest.approx(0.0123 / 0.0045 / 49, rel=1e-6)


# ---- refusals -----------------------------------------------------------------------------------
def _requantized(t: Tensor, scale: float, zero_point: int) -> Quantization:
    return Quantization(np.array([scale]), np.array([zero_point]), 0)


def _reasons(graph: Graph, op: Operator) -> list[str]:
    return REGISTRY[op.opcode].check(op, graph)


def test_concatenation_refuses_inputs_quantized_unlike_the_output():
    graph = read_model(MODELS / "concat_inputs2_w.tflite")
    op = graph.operators[0]
    assert _reasons(graph, op) == []
    t = graph.tensor(op.inputs[1])
    t.quant = _requantized(t, t.scale * 2, t.zero_point)
    (reason,) = _reasons(graph, op)
    assert "input 1" in reason and "without requantizing" in reason


def test_pooling_refuses_rescaling():
    graph = read_model(MODELS / "avgpool_3x3_same_s2.tflite")
    op = graph.operators[0]
    out = graph.tensor(op.outputs[0])
    out.quant = _requantized(out, out.scale, out.zero_point + 3)
    (reason,) = _reasons(graph, op)
    assert "quantized differently" in reason


def test_conv_refuses_asymmetric_filters_and_wrong_output_shape():
    graph = read_model(MODELS / "conv_3x3_valid_s2_relu6_pc.tflite")
    op = graph.operators[0]
    w, out = graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
    w.quant = Quantization(w.quant.scale, np.ones_like(w.quant.zero_point), 0)
    out.shape = (1, 5, 4, 5)
    reasons = _reasons(graph, op)
    assert any("non-zero zero points" in r for r in reasons)
    assert any("expected (1, 4, 4, 5)" in r for r in reasons)


def test_depthwise_refuses_inconsistent_multiplier():
    graph = read_model(MODELS / "dw_3x3_valid_s2_relu6_m2_pc.tflite")
    op = graph.operators[0]
    op.options["depth_multiplier"] = 3
    (reason,) = _reasons(graph, op)
    assert "depth_multiplier option is 3 but the shapes say 2" in reason


def test_mean_refuses_more_than_two_axes():
    graph = read_model(MODELS / "mean_axes13_keepdims.tflite")
    op = graph.operators[0]
    axis = graph.tensor(op.inputs[1])
    axis.data = np.array([1, 2, 3], dtype=np.int32)
    axis.shape = (3,)
    out = graph.tensor(op.outputs[0])
    out.shape = (1, 1, 1, 1)
    (reason,) = _reasons(graph, op)
    assert "at most 2" in reason


def test_pad_refuses_negative_paddings():
    graph = read_model(MODELS / "pad_hw_1203.tflite")
    op = graph.operators[0]
    pads = graph.tensor(op.inputs[1])
    pads.data = np.array([[0, 0], [-1, 2], [0, 3], [0, 0]], dtype=pads.data.dtype)
    (reason,) = _reasons(graph, op)
    assert "negative" in reason


@pytest.mark.parametrize("shape,paddings", [
    ((1, 5, 6, 3), [[0, 0], [1, 2], [0, 3], [0, 0]]),   # C unpadded: merged into W
    ((1, 4, 3, 2), [[0, 0], [2, 1], [1, 1], [1, 2]]),   # every dimension padded: unchanged
    ((2, 3, 4), [[0, 0], [0, 0], [1, 0]]),               # leading unpadded dimensions
])
def test_pad_merges_unpadded_dimensions_into_the_same_layout(shape, paddings):
    from microbuild.compiler.ops.pad import merged_dims

    dims, before, after = merged_dims(shape, paddings)
    x = np.arange(int(np.prod(shape))).reshape(shape) + 1
    merged = np.pad(x.reshape(dims), list(zip(before, after)))
    assert np.array_equal(merged.reshape(-1), np.pad(x, paddings).reshape(-1))
    assert len(dims) == len(shape) - sum(1 for b, a in paddings[1:] if b == a == 0)
