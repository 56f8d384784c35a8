"""TRANSPOSE_CONV: the sweep (Keras Conv2DTranspose, int8 per channel and per tensor, 16x8)
bit-exact with TFLM, hand-built configurations the converter does not emit (a fused activation
that clamps, two batches, an output larger than the input reaches), and refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

MODELS = Path(__file__).resolve().parent.parent / "models"
SWEEP = sorted((MODELS / "ops").glob("tconv_*.tflite"))
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402

ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
PADDING = {"SAME": 0, "VALID": 1}


def test_the_transpose_conv_sweep_is_there():
    assert {p.stem for p in SWEEP} == {
        "tconv_3x3_same_s2_relu_pc", "tconv_3x3_same_s1_pc", "tconv_4x4_valid_s2_pc",
        "tconv_4x4_same_s2_nobias_pc", "tconv_3x3_valid_s1_nobias_pt",
        "tconv_3x3_same_s2_relu_pt", "tconv_2x3_same_s2x1_relu6_pc", "tconv_3x3_valid_s3_pc",
        "tconv_s16_3x3_same_s2_relu", "tconv_s16_4x4_valid_s2_nobias", "tconv_s16_3x3_same_s1",
        "tconv_3x3_same_s2_fixed_batch_pc", "tconv_autoencoder_pc", "tconv_s16_autoencoder"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_transpose_conv_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=6, seed=26, cc=cc, tmp_path=tmp_path)


def test_the_output_shape_chain_of_an_open_batch_is_dead_code():
    compiled = compile_model(MODELS / "ops" / "tconv_3x3_same_s2_relu_pc.tflite")
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["TRANSPOSE_CONV"]
    # The int32 sums of the whole output live in the op's scratch area.
    op = compiled.summary()["ops"][0]
    assert op["scratch_bytes"] == 10 * 12 * 4 * 4


def _tconv(x_shape=(1, 4, 5, 3), out_shape=(1, 8, 10, 4), kernel=(3, 3), stride=(2, 2),
           padding="SAME", activation="NONE", dtype="int8", bias_dtype=None, bias_value=None,
           output_quant=(0.05, 20), shape_operand="constant", seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    s16 = dtype == "int16"
    x = b.tensor("x", x_shape, dtype, 0.02 if not s16 else 0.0004, 0 if s16 else -9)
    out_c, in_c = out_shape[3], x_shape[3]
    w = b.constant("w", rng.integers(-127, 128, (out_c, *kernel, in_c), dtype=np.int8),
                   scale=rng.uniform(0.002, 0.01, out_c), axis=0)
    shape = b.constant("shape", np.array(out_shape, np.int32)) if shape_operand == "constant" \
        else -1
    inputs = [shape, w, x]
    bias_dtype = bias_dtype or ("int64" if s16 else "int32")
    if bias_dtype != "none":
        values = rng.integers(-4000, 4000, out_c) if bias_value is None \
            else np.full(out_c, bias_value)
        inputs.append(b.constant("bias", values.astype(bias_dtype)))
    scale, zp = output_quant
    y = b.tensor("y", out_shape, dtype, scale if not s16 else 0.004, 0 if s16 else zp)
    b.operator("TRANSPOSE_CONV", inputs, [y], "TransposeConvOptions",
               padding=PADDING[padding], strideH=stride[0], strideW=stride[1],
               fusedActivationFunction=ACTIVATIONS[activation])
    return b.build([x], [y])


@pytest.mark.parametrize("case", [
    dict(activation="RELU6"),
    dict(activation="RELU_N1_TO_1", output_quant=(0.01, 3)),
    dict(activation="RELU", dtype="int16"),
    dict(x_shape=(2, 3, 4, 2), out_shape=(2, 7, 9, 3), padding="VALID"),
    dict(x_shape=(2, 3, 4, 2), out_shape=(2, 6, 8, 3), dtype="int16", bias_dtype="none"),
    # SAME with an odd output: TFLM's padding from the output size, the last row reached once.
    dict(x_shape=(1, 5, 3, 2), out_shape=(1, 9, 5, 3), kernel=(4, 2)),
    dict(x_shape=(1, 3, 3, 2), out_shape=(1, 12, 11, 2), kernel=(2, 2), stride=(4, 3),
         padding="VALID"),
    # The int16 bias of older 16x8 converters: TFLM widens it to int64.
    dict(dtype="int16", bias_dtype="int16"),
], ids=["relu6", "relu_n1_to_1", "s16_relu", "batch2_valid", "s16_batch2_nobias",
        "same_odd_output", "stride_beyond_kernel", "s16_int16_bias"])
def test_hand_built_transpose_conv_is_bit_exact(case, tmp_path):
    path = tmp_path / "tconv.tflite"
    path.write_bytes(_tconv(**case))
    assert_bit_exact(path, n=6, seed=4, tmp_path=tmp_path)


def test_fused_activation_clamps(tmp_path):
    """With RELU6 on an output whose range reaches below 0 and above 6, TFLM clamps to the
    activation's range (its transpose conv applies the fused activation)."""
    from compiler_support import random_inputs, run_on_host

    path = tmp_path / "relu6.tflite"
    path.write_bytes(_tconv(activation="RELU6"))
    outputs = run_on_host(path, random_inputs(path, 4, 2), workdir=tmp_path)
    values = np.concatenate([o[0].reshape(-1) for o in outputs])
    # zero point 20, scale 0.05: 0.0 is 20, 6.0 is 140 (beyond int8: no upper clamp)
    assert values.min() == 20


def _refusal(tmp_path, **kwargs) -> str:
    path = tmp_path / "refused.tflite"
    path.write_bytes(_tconv(**kwargs))
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def test_refuses_an_output_shape_operand_that_disagrees(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 4, 2), "int8", 0.02, 0)
    w = b.constant("w", np.ones((3, 3, 3, 2), np.int8), scale=0.01)
    shape = b.constant("shape", np.array([1, 8, 7, 3], np.int32))
    y = b.tensor("y", (1, 8, 8, 3), "int8", 0.05, 0)
    b.operator("TRANSPOSE_CONV", [shape, w, x], [y], "TransposeConvOptions", padding=0,
               strideH=2, strideW=2)
    path = tmp_path / "shape.tflite"
    path.write_bytes(b.build([x], [y]))
    with pytest.raises(ModelError, match=r"output shape operand says \[1, 8, 7, 3\] but the "
                                         r"output tensor has shape \[1, 8, 8, 3\]"):
        compile_model(path)


def test_refuses_sums_beyond_int32(tmp_path):
    message = _refusal(tmp_path, bias_value=2**31 - 1)
    assert "beyond int32" in message and "overflow" in message


def test_refuses_an_int32_bias_with_int16_activations(tmp_path):
    message = _refusal(tmp_path, dtype="int16", bias_dtype="int32")
    assert "bias 'bias' is int32; int64 is expected here" in message


def test_refuses_mismatched_depths(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 4, 2), "int8", 0.02, 0)
    w = b.constant("w", np.ones((3, 3, 3, 5), np.int8), scale=0.01)
    y = b.tensor("y", (1, 8, 8, 3), "int8", 0.05, 0)
    b.operator("TRANSPOSE_CONV", [-1, w, x], [y], "TransposeConvOptions", padding=0,
               strideH=2, strideW=2)
    path = tmp_path / "depth.tflite"
    path.write_bytes(b.build([x], [y]))
    with pytest.raises(ModelError, match="input depth 2 differs from the filter depth 5"):
        compile_model(path)
