"""ADD, MUL, QUANTIZE, DEQUANTIZE, LOGISTIC, TANH, RELU, RELU6 and HARD_SWISH.

Every model from tests/models/generate/ops_elementwise.py, compiled to C with gcc and with clang,
must equal TFLM bit for bit on seeded random inputs; the unary int8 models are also run on all 256
int8 values at once, and the float-input models on rounding ties and out-of-range values. Plus unit
tests of the compile-time pieces that are easy to get subtly wrong: broadcast planning, the ADD/MUL
multipliers, the gemmlowp fixed-point functions behind the LOGISTIC/TANH tables, and refusals.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, run_on_host, run_tflm

from microbuild.compiler import compile_model, fixedpoint
from microbuild.compiler.elementwise import broadcast_shape, c_float, plan_broadcast
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.ops.add import add_params
from microbuild.compiler.ops.hard_swish import downscale_multiplier_to_int16
from microbuild.compiler.ops.logistic import q4_input_params
from microbuild.compiler.ops.mul import mul_params
from microbuild.compiler.ops.relu import relu6_bounds
from microbuild.model.ir import Graph, Operator, Quantization, Tensor
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models" / "ops"
sys.path.insert(0, str(MODELS.parent / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402

BINARY_MODELS = [
    "add_same", "add_same_relu", "add_same_relu6", "add_channel_const", "add_scalar_const",
    "add_bcast_general", "add_bcast_first",
    "mul_same", "mul_same_relu", "mul_channel_const", "mul_scalar_const", "mul_bcast_general",
]
# int8 -> int8 single-op models with exactly 256 input elements.
UNARY_MODELS = [
    "logistic", "logistic_narrow", "tanh", "tanh_wide", "relu", "relu_negative", "relu6",
    "relu6_small", "hard_swish", "hard_swish_asym", "hard_swish_wide",
    "requantize_s8_down", "requantize_s8_up",
]
FLOAT_IO_MODELS = ["float_io_add", "float_io_logistic"]
ALL_MODELS = BINARY_MODELS + UNARY_MODELS + FLOAT_IO_MODELS


def _path(name: str) -> Path:
    return MODELS / f"{name}.tflite"


def _assert_same(name: str, want: list[np.ndarray], got: list[np.ndarray]) -> None:
    for k, (w, g) in enumerate(zip(want, got)):
        w = np.asarray(w).reshape(g.shape)
        assert w.dtype == g.dtype, (name, k, w.dtype, g.dtype)
        bad = np.argwhere(w != g)
        assert bad.size == 0, (f"{name} output {k}: {len(bad)} elements differ, first at "
                               f"{bad[:4].tolist()}: C {g[tuple(bad[0])]} vs TFLM {w[tuple(bad[0])]}")


# ---- end to end against TFLM ----------------------------------------------------------------
def test_models_are_what_the_tests_expect():
    # The generator checks operator lists when it writes; this guards against stale files.
    expected = {"add": ["ADD"], "mul": ["MUL"], "logistic": ["LOGISTIC"], "tanh": ["TANH"],
                "relu6": ["RELU6"], "relu": ["RELU"], "hard_swish": ["HARD_SWISH"],
                "requantize": ["QUANTIZE"]}
    for name in BINARY_MODELS + UNARY_MODELS:
        ops = [op.opcode for op in read_model(_path(name)).operators]
        key = next(k for k in sorted(expected, key=len, reverse=True) if name.startswith(k))
        assert ops == expected[key], (name, ops)
    assert [op.opcode for op in read_model(_path("float_io_add")).operators] == [
        "QUANTIZE", "QUANTIZE", "ADD", "DEQUANTIZE"]


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("name", ALL_MODELS)
def test_bit_exact_with_tflm(name, cc, tmp_path):
    assert_bit_exact(_path(name), n=10, seed=0, cc=cc, tmp_path=tmp_path)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("name", UNARY_MODELS)
def test_every_int8_input(name, cc, tmp_path):
    """All 256 int8 values in one tensor: the whole function, compared with TFLM."""
    graph = read_model(_path(name))
    shape = graph.tensor(graph.inputs[0]).shape
    assert int(np.prod(shape)) == 256, shape
    x = np.arange(-128, 128, dtype=np.int8).reshape(shape)
    want = run_tflm(_path(name), [x])
    (got,) = run_on_host(_path(name), [[x]], cc=cc, workdir=tmp_path)
    _assert_same(name, want, got)


# 8-bit unary ops that compile to one mb_lut_s8 table (runtime/kernels/lut.c) instead of their
# per-value rounding multiply; uint8 <-> int8 at one scale with zero points 128 apart is the
# table k -> k, a flip of each byte's top bit with no table.
TABLE_MODELS = ["relu", "relu6", "leaky_relu_0p1", "requantize_s8_down", "quantize_u8_s8",
                "quantize_s8_u8", "hard_swish", "logistic"]
FLIP_MODELS = ["quantize_u8_s8_camera", "quantize_s8_u8_softmax"]


def test_8bit_unary_ops_compile_to_a_table():
    for name in TABLE_MODELS + FLIP_MODELS:
        source = compile_model(_path(name)).sources["model.c"]
        kernel = "mb_flip_sign_bits_s8(" if name in FLIP_MODELS else "mb_lut_s8("
        assert kernel in source, name
        assert "mb_requantize_s8" not in source and "mb_leaky_relu_s8" not in source, name


def _camera_relu_to_uint8(n: int) -> bytes:
    """uint8 -> int8 QUANTIZE at one scale (the sign-bit flip), RELU and an int8 -> uint8
    QUANTIZE (a table ordered for a uint8 output) on n values, n not a multiple of 4: the
    kernels' byte tails after their word loops."""
    b = ModelBuilder()
    x = b.tensor("x", (1, n), "uint8", 0.05, 128)
    q = b.tensor("q", (1, n), "int8", 0.05, 0)
    r = b.tensor("r", (1, n), "int8", 0.03, -20)
    out = b.tensor("out", (1, n), "uint8", 0.04, 131)
    b.operator("QUANTIZE", [x], [q])
    b.operator("RELU", [q], [r])
    b.operator("QUANTIZE", [r], [out])
    return b.build([x], [out])


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_table_kernels_tail_and_uint8_ends(cc, tmp_path):
    path = tmp_path / "camera_relu_u8.tflite"
    path.write_bytes(_camera_relu_to_uint8(259))
    source = compile_model(path).sources["model.c"]
    assert "mb_flip_sign_bits_s8(" in source and source.count("_lut[256]") == 2
    x = np.concatenate([np.arange(0, 256), [255, 0, 133]]).astype(np.uint8).reshape(1, 259)
    want = run_tflm(path, [x])
    (got,) = run_on_host(path, [[x]], cc=cc, workdir=tmp_path)
    _assert_same("camera_relu_u8", want, got)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_quantize_rounding_ties_and_saturation(cc, tmp_path):
    """float -> int8 QUANTIZE on values that land exactly on .5 after the division, on -0.0, and
    on values far outside the int8 range (saturation), then LOGISTIC and DEQUANTIZE."""
    path = _path("float_io_logistic")
    graph = read_model(path)
    quantize = graph.operators[0]
    assert quantize.opcode == "QUANTIZE"
    scale = np.float32(graph.tensor(quantize.outputs[0]).scale)
    shape = graph.tensor(graph.inputs[0]).shape
    ties = (np.arange(-64, 64, dtype=np.float32) + np.float32(0.5)) * scale
    extremes = np.array([0.0, -0.0, 1e6, -1e6, 3e4, -3e4, 1e-30, -1e-30], dtype=np.float32)
    rng = np.random.default_rng(7)
    rest = rng.uniform(-200, 200, 256 - len(ties) - len(extremes)).astype(np.float32) * scale
    x = np.concatenate([ties, extremes, rest]).astype(np.float32).reshape(shape)
    want = run_tflm(path, [x])
    (got,) = run_on_host(path, [[x]], cc=cc, workdir=tmp_path)
    _assert_same("float_io_logistic", want, got)


# ---- broadcasting -----------------------------------------------------------------------------
def test_broadcast_shape():
    assert broadcast_shape((1, 4, 4, 8), (8,)) == (1, 4, 4, 8)
    assert broadcast_shape((1, 4, 1, 8), (1, 1, 5, 1)) == (1, 4, 5, 8)
    assert broadcast_shape((), (2, 3)) == (2, 3)
    assert broadcast_shape((4, 3), (4,)) is None


def test_plan_same_shape_is_one_flat_run():
    plan = plan_broadcast((1, 4, 4, 8), (1, 4, 4, 8), (1, 4, 4, 8))
    assert (plan.dims, plan.a_strides, plan.b_strides) == ((128,), (1,), (1,))
    assert plan.a_is_full


def test_plan_scalar_and_per_channel():
    scalar = plan_broadcast((1, 3, 5, 6), (), (1, 3, 5, 6))
    assert (scalar.dims, scalar.a_strides, scalar.b_strides) == ((90,), (1,), (0,))
    channel = plan_broadcast((1, 4, 4, 8), (8,), (1, 4, 4, 8))
    assert (channel.dims, channel.a_strides, channel.b_strides) == ((16, 8), (8, 1), (0, 1))


def test_plan_general_and_broadcast_first_operand():
    plan = plan_broadcast((1, 4, 1, 8), (1, 1, 5, 1), (1, 4, 5, 8))
    assert (plan.dims, plan.a_strides, plan.b_strides) == ((4, 5, 8), (8, 0, 1), (0, 1, 0))
    assert not plan.a_is_full
    first = plan_broadcast((1, 1, 1, 8), (1, 4, 4, 8), (1, 4, 4, 8))
    assert (first.dims, first.a_strides, first.b_strides) == ((16, 8), (0, 1), (8, 1))
    assert not first.a_is_full


def test_plan_walk_matches_numpy_broadcasting():
    """Walking the plan the way mb_broadcast_binary_s8 does visits numpy's broadcast pairs."""
    rng = np.random.default_rng(3)
    cases = [((2, 1, 3, 1, 4), (1, 5, 3, 2, 1)), ((6,), (3, 1)), ((1,), (2, 2, 2)),
             ((2, 3, 4), (2, 3, 4)), ((3, 1, 1, 2), (1, 1))]
    for sa, sb in cases:
        out = broadcast_shape(sa, sb)
        a = rng.integers(0, 1000, sa)
        b = rng.integers(0, 1000, sb)
        plan = plan_broadcast(sa, sb, out)
        got = []
        for idx in np.ndindex(*plan.dims):
            got.append((a.reshape(-1)[np.dot(idx, plan.a_strides)],
                        b.reshape(-1)[np.dot(idx, plan.b_strides)]))
        ea, eb = np.broadcast_arrays(a, b)
        assert got == list(zip(ea.reshape(-1), eb.reshape(-1))), (sa, sb, plan)


# ---- compile-time parameters ------------------------------------------------------------------
def test_add_params_equal_scales():
    # Equal input scales: each input multiplier is exactly 1/2 (Q31 2^30, no shift), and the output
    # multiplier is 2 s / (2^20 s_out).
    p = add_params(0.25, 3, 0.25, -7, 0.5, 1, "NONE")
    assert (p["input1_multiplier"], p["input1_shift"]) == (1 << 30, 0)
    assert (p["input2_multiplier"], p["input2_shift"]) == (1 << 30, 0)
    assert (p["input1_offset"], p["input2_offset"], p["output_offset"]) == (-3, 7, 1)
    assert (p["output_multiplier"], p["output_shift"]) == (1 << 30, -19)
    assert (p["activation_min"], p["activation_max"]) == (-128, 127)


def test_add_params_fused_relu6_range():
    p = add_params(0.1, 0, 0.2, 0, 6.0 / 255, -128, "RELU6")
    assert (p["activation_min"], p["activation_max"]) == (-128, 127)
    p = add_params(0.1, 0, 0.2, 0, 0.05, -10, "RELU6")
    assert (p["activation_min"], p["activation_max"]) == (-10, 110)


def test_mul_params():
    p = mul_params(0.5, 1, 0.25, -2, 0.125, 4, "RELU")
    # 0.5 * 0.25 / 0.125 = 1.0 = 2^30 / 2^31 * 2^1
    assert (p["output_multiplier"], p["output_shift"]) == (1 << 30, 1)
    assert (p["input1_offset"], p["input2_offset"], p["activation_min"]) == (-1, 2, 4)


def test_relu6_bounds_round_half_away_from_zero_in_float():
    assert relu6_bounds(6.0 / 100.0, -50) == (-50, 50)
    assert relu6_bounds(0.5, 0) == (0, 12)
    assert relu6_bounds(0.01, 0) == (0, 127)  # 600 clamps to int8


def test_q4_input_params_follow_tflm_prepare():
    # scale 2^-5: 2^-5 * 2^27 = 2^22 -> frexp 0.5, shift 23; radius floor(15 * 2^27 / 2^23) = 240.
    assert q4_input_params(2.0 ** -5) == (1 << 30, 23, 240)


def test_downscale_multiplier_to_int16():
    assert downscale_multiplier_to_int16(1 << 30) == 1 << 14
    assert downscale_multiplier_to_int16((1 << 31) - 1) == 32767
    assert downscale_multiplier_to_int16(32767) == 0
    assert downscale_multiplier_to_int16(32768) == 1


def test_c_float_is_exact():
    for v in (0.011763202026486397, 1.0, 1.0 / 256, 3.4e38, 1e-40):
        literal = c_float(v).split(" ")[0]
        assert literal.endswith("f")
        assert np.float32(float.fromhex(literal[:-1])) == np.float32(v)


# ---- the gemmlowp fixed-point functions -------------------------------------------------------
def test_fixedpoint_special_values():
    assert fixedpoint.logistic(0, 4) == 1 << 30
    assert fixedpoint.tanh(0, 4) == 0
    assert fixedpoint.exp_on_negative_values(0, 4) == fixedpoint.INT32_MAX
    assert fixedpoint.rounding_half_sum(3, 4) == 4
    assert fixedpoint.rounding_half_sum(-3, -4) == -4


def test_fixedpoint_functions_approximate_the_real_ones():
    # Not the bit-exactness test (that is against TFLM above): a check that the port computes the
    # right functions, to well under one int8 output step.
    for x in np.linspace(-7.9, 7.9, 97):
        raw = int(round(x * 2 ** 27))  # Q4.27
        assert abs(fixedpoint.logistic(raw, 4) / 2 ** 31 - 1 / (1 + math.exp(-x))) < 1e-5, x
        assert abs(fixedpoint.tanh(raw, 4) / 2 ** 31 - math.tanh(x)) < 1e-5, x
        if x < 0:
            assert abs(fixedpoint.exp_on_negative_values(raw, 4) / 2 ** 31 - math.exp(x)) < 1e-6


def test_fixedpoint_saturating_shift():
    assert fixedpoint.saturating_rounding_mul_by_pot(1 << 29, 2) == fixedpoint.INT32_MAX
    assert fixedpoint.saturating_rounding_mul_by_pot(-(1 << 29), 2) == fixedpoint.INT32_MIN
    assert fixedpoint.saturating_rounding_mul_by_pot(5, -1) == 3  # 2.5 rounds away from zero
    assert fixedpoint.saturating_rounding_mul_by_pot(-5, -1) == -3


# ---- refusals and in-place --------------------------------------------------------------------
def _q(scale: float, zero_point: int) -> Quantization:
    return Quantization(np.array([scale]), np.array([zero_point]))


def _graph(opcode: str, inputs: list[Tensor], output: Tensor, **options) -> tuple[Operator, Graph]:
    tensors = inputs + [output]
    for i, t in enumerate(tensors):
        t.index = i
    op = Operator(0, opcode, 1, list(range(len(inputs))), [len(inputs)], dict(options))
    graph = Graph(tensors, [op], [t.index for t in inputs if not t.is_constant], [output.index])
    return op, graph


def _t(shape, dtype="int8", quant=None, data=None) -> Tensor:
    return Tensor(0, "t", tuple(shape), dtype, quant, data)


def test_add_refuses_int16_per_channel_and_bad_shapes():
    op, g = _graph("ADD", [_t((1, 8), "int16", _q(0.1, 0)), _t((1, 8), quant=_q(0.1, 0))],
                   _t((1, 8), quant=_q(0.1, 0)))
    assert any("int16" in r for r in REGISTRY["ADD"].check(op, g))
    per_channel = Quantization(np.array([0.1, 0.2]), np.array([0, 0]), axis=1)
    op, g = _graph("ADD", [_t((1, 2), quant=per_channel), _t((1, 2), quant=_q(0.1, 0))],
                   _t((1, 2), quant=_q(0.1, 0)))
    assert any("per channel" in r for r in REGISTRY["ADD"].check(op, g))
    op, g = _graph("MUL", [_t((4, 3), quant=_q(0.1, 0)), _t((4,), quant=_q(0.1, 0))],
                   _t((4, 3), quant=_q(0.1, 0)))
    assert any("do not broadcast" in r for r in REGISTRY["MUL"].check(op, g))
    op, g = _graph("ADD", [_t((1, 8), quant=_q(0.1, 0)), _t((1, 8), quant=_q(0.1, 0))],
                   _t((1, 8), quant=_q(0.1, 0)), fused_activation_function="TANH")
    assert any("TANH" in r for r in REGISTRY["ADD"].check(op, g))


def test_add_refuses_output_multiplier_of_one_or_more():
    op, g = _graph("ADD", [_t((1, 8), quant=_q(1.0, 0)), _t((1, 8), quant=_q(1.0, 0))],
                   _t((1, 8), quant=_q(2.0 ** -20, 0)))
    assert any("too small" in r for r in REGISTRY["ADD"].check(op, g))


def test_activation_output_quantization_is_checked():
    op, g = _graph("LOGISTIC", [_t((1, 8), quant=_q(0.05, 0))], _t((1, 8), quant=_q(0.01, 0)))
    assert any("1/256" in r for r in REGISTRY["LOGISTIC"].check(op, g))
    op, g = _graph("TANH", [_t((1, 8), quant=_q(0.05, 0))], _t((1, 8), quant=_q(1 / 256, -128)))
    assert any("1/128" in r for r in REGISTRY["TANH"].check(op, g))
    op, g = _graph("HARD_SWISH", [_t((1, 8), quant=_q(1.0, 0))], _t((1, 8), quant=_q(1e-4, 0)))
    assert any("output_multiplier_exponent" in r for r in REGISTRY["HARD_SWISH"].check(op, g))
    op, g = _graph("RELU", [_t((1, 8), quant=_q(0.05, 0))], _t((1, 9), quant=_q(0.05, 0)))
    assert any("elements" in r for r in REGISTRY["RELU"].check(op, g))


def test_quantize_and_dequantize_types():
    op, g = _graph("QUANTIZE", [_t((1, 8), "int16", _q(0.1, 0))], _t((1, 8), quant=_q(0.1, 0)))
    assert REGISTRY["QUANTIZE"].check(op, g) == []  # int16 -> int8 requantizes (16x8 models)
    op, g = _graph("QUANTIZE", [_t((1, 8), "uint8", _q(0.1, 0))], _t((1, 8), quant=_q(0.1, 0)))
    assert REGISTRY["QUANTIZE"].check(op, g) == []  # a uint8 camera input
    # TFLM's QUANTIZE has no uint8 -> int16 either (tests/compiler/test_ops_quantize.py has all)
    op, g = _graph("QUANTIZE", [_t((1, 8), "uint8", _q(0.1, 0))],
                   _t((1, 8), "int16", quant=_q(0.1, 0)))
    assert any("converts uint8 to int16, which TFLM's QUANTIZE does not" in r
               for r in REGISTRY["QUANTIZE"].check(op, g))
    op, g = _graph("QUANTIZE", [_t((1, 8), "float32")], _t((1, 8), quant=_q(0.1, 0)))
    assert REGISTRY["QUANTIZE"].check(op, g) == []
    op, g = _graph("DEQUANTIZE", [_t((1, 8), quant=_q(0.1, 0))], _t((1, 8), "int16"))
    assert any("float32" in r for r in REGISTRY["DEQUANTIZE"].check(op, g))


def test_in_place_only_when_input0_is_read_before_each_write():
    for name, in_place in [("add_same", True), ("add_channel_const", True),
                           ("add_bcast_first", False), ("add_bcast_general", False),
                           ("mul_same", True), ("logistic", True), ("relu6", True)]:
        graph = read_model(_path(name))
        op = graph.operators[0]
        assert REGISTRY[op.opcode].can_run_in_place(op, graph) is in_place, name
    graph = read_model(_path("float_io_add"))
    by_code = {op.opcode: op for op in graph.operators}
    assert REGISTRY["QUANTIZE"].can_run_in_place(by_code["QUANTIZE"], graph)
    assert not REGISTRY["DEQUANTIZE"].can_run_in_place(by_code["DEQUANTIZE"], graph)
