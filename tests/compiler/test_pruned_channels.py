"""Pruned channels (all-zero filter, bias +-2^30, as in trained and pruned MobileNet VWW and
ResNet-8-large): the bias is shrunk to the smallest equivalent value at compile time, the fast
kernel variants then take the layer, and every output stays bit-exact with TFLM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact

from microbuild.boards import load_board
from microbuild.compiler import compile_model
from microbuild.compiler.pruned_channels import _nearest_equivalent
from microbuild.compiler.quant import multiply_by_quantized_multiplier, quantize_multiplier
from microbuild.compiler.variants import REFERENCE, Selection, Target
from microbuild.model.reader import read_model

OPS = Path(__file__).resolve().parent.parent / "models" / "ops"
MODELS = sorted(OPS.glob("*_pruned_channels_*.tflite"))


def test_the_pruned_channel_models_are_there():
    assert {p.stem for p in MODELS} == {
        "conv_3x3_same_pruned_channels_pc", "conv_3x3_same_pruned_channels_relu6_pc",
        "dw_3x3_same_pruned_channels_pc", "dw_3x3_same_pruned_channels_relu_pc"}
    for path in MODELS:  # the models really carry what the test is about
        bias = read_model(path).tensors[2].data
        assert sorted(int(v) for v in bias if abs(int(v)) == 1 << 30) == [-(1 << 30), 1 << 30]


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_fast_kernels_take_layers_with_pruned_channels(model):
    m7 = Target.of_board(load_board("mps2-an500"))
    compiled = compile_model(model, selection=Selection(m7))
    summary = compiled.summary()
    assert [op["kernel"] for op in summary["ops"]] == ["dsp"]
    assert any("2 pruned channel(s)" in note for note in summary["notes"]), summary["notes"]
    generic = compile_model(model).summary()
    assert generic["ops"][0]["kernel"] != REFERENCE


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("kernels", ["default", "reference"])
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_pruned_channel_models_are_bit_exact(model, kernels, cc, tmp_path):
    variants = {"*": REFERENCE} if kernels == "reference" else None
    assert_bit_exact(model, n=6, seed=23, cc=cc, tmp_path=tmp_path, variants=variants)


def _output(acc, multiplier, shift, zero_point, low, high):
    return min(high, max(low, multiply_by_quantized_multiplier(acc, multiplier, shift)
                         + zero_point))


def test_the_equivalent_bias_is_the_nearest_to_zero_with_the_same_output():
    rng = np.random.default_rng(5)
    for _ in range(3000):
        multiplier, shift = quantize_multiplier(float(rng.uniform(1e-6, 2.5)))
        zero_point = int(rng.integers(-128, 128))
        low = int(rng.integers(-128, 0))
        high = int(rng.integers(low + 1, 128))
        bias = int(rng.choice([1 << 30, -(1 << 30), int(rng.integers(-(1 << 31), 1 << 31))]))
        if shift > 0 and abs(bias) > ((1 << 31) - 1) >> shift:
            assert _nearest_equivalent(bias, multiplier, shift, zero_point, low, high) == bias
            continue
        got = _nearest_equivalent(bias, multiplier, shift, zero_point, low, high)
        want = _output(bias, multiplier, shift, zero_point, low, high)
        assert _output(got, multiplier, shift, zero_point, low, high) == want
        assert abs(got) <= abs(bias) and (got == 0 or np.sign(got) == np.sign(bias))
        if got != 0:  # one step nearer zero gives another output
            nearer = got - int(np.sign(got))
            assert _output(nearer, multiplier, shift, zero_point, low, high) != want


def _large_bias_conv(path: Path) -> Path:
    """A CONV_2D whose channel 1 has real weights and a bias of 2^30: no variant can take it."""
    import sys

    sys.path.insert(0, str(OPS.parent / "generate"))
    from tflite_builder import ModelBuilder

    rng = np.random.default_rng(1)
    b = ModelBuilder()
    x = b.tensor("x", (1, 6, 6, 8), "int8", 0.02, 3)
    f = b.constant("f", rng.integers(-127, 128, (4, 3, 3, 8), dtype=np.int8), scale=[0.01] * 4)
    bias = b.constant("b", np.array([100, 1 << 30, -5, 7], np.int32), scale=[0.0002] * 4)
    y = b.tensor("y", (1, 6, 6, 4), "int8", 0.5, 0)
    b.operator("CONV_2D", [x, f, bias], [y], "Conv2DOptions", version=3, padding=0, strideW=1,
               strideH=1, fusedActivationFunction=0, dilationWFactor=1, dilationHFactor=1)
    path.write_bytes(b.build([x], [y]))
    return path


def test_a_layer_left_on_the_reference_says_which_check_refused_it(tmp_path, capsys):
    from microbuild import cli

    model = _large_bias_conv(tmp_path / "large_bias.tflite")
    m7 = Target.of_board(load_board("mps2-an500"))
    op = compile_model(model, selection=Selection(m7)).summary()["ops"][0]
    assert op["kernel"] == REFERENCE
    refused = dict(op["variants_refused"])
    # grouped and dsp_groups take only convolutions of two groups or more; this one has one.
    assert refused.pop("grouped") == "one group"
    assert refused.pop("dsp_groups") == "one group"
    assert set(refused) == {"gemm", "dsp", "dsp16"}  # not mve: no Helium on M7
    assert all(why.startswith("channel 1: ") and "2^30" in why for why in refused.values())
    assert cli.main(["compile", str(model), "--board", "mps2-an500", "-o",
                     str(tmp_path / "out")]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "op 0 CONV_2D runs the reference kernel on cortex-m7: gemm, dsp, dsp16: channel 1:" \
        in text
    assert_bit_exact(model, n=4, seed=1, tmp_path=tmp_path)
