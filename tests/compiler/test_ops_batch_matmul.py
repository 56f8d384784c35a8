"""BATCH_MATMUL: the sweep (tf.matmul in Keras models and a tf.function: adj_x/adj_y,
broadcast batch dimensions up to rank 5, a constant rhs, 16x8) bit-exact with TFLM, evaluation of
two constants at compile time, refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

MODELS = Path(__file__).resolve().parent.parent / "models"
SWEEP = sorted((MODELS / "ops").glob("bmm_*.tflite"))
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402


def test_the_batch_matmul_sweep_is_there():
    assert {p.stem for p in SWEEP} == {
        "bmm_3x4_4x5", "bmm_adj_x", "bmm_adj_y", "bmm_adj_xy", "bmm_bcast_rank4",
        "bmm_bcast_rank5", "bmm_s16_3x4_4x5", "bmm_s16_adj_y_bcast", "bmm_s16_adj_x",
        "bmm_const_rhs_bcast",
        "bmm_const_rhs_adj_y", "bmm_rank2_by_rank3"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_batch_matmul_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=6, seed=27, cc=cc, tmp_path=tmp_path)


def test_a_constant_rhs_is_stored_transposed():
    compiled = compile_model(MODELS / "ops" / "bmm_const_rhs_bcast.tflite")
    assert "rhs_transposed" in compiled.sources["model_weights.c"]


def _matmul(lhs_shape, rhs_shape, out_shape, adj_x=False, adj_y=False, dtype="int8",
            rhs_constant=None, lhs_constant=None, rhs_quant=(0.03, 5), out_zp=-4,
            rhs_dtype=None) -> tuple[bytes, list[int]]:
    b = ModelBuilder()
    zp = 0 if dtype == "int16" else 1
    if lhs_constant is not None:
        lhs = b.constant("lhs", lhs_constant, scale=0.02, zero_point=zp)
    else:
        lhs = b.tensor("lhs", lhs_shape, dtype, 0.02, zp)
    if rhs_constant is not None:
        rhs = b.constant("rhs", rhs_constant, scale=rhs_quant[0], zero_point=rhs_quant[1])
    else:
        rhs = b.tensor("rhs", rhs_shape, rhs_dtype or dtype, *rhs_quant)
    y = b.tensor("y", out_shape, dtype, 0.1, 0 if dtype == "int16" else out_zp)
    b.operator("BATCH_MATMUL", [lhs, rhs], [y], "BatchMatMulOptions", adjX=adj_x, adjY=adj_y)
    inputs = [t for t, c in ((lhs, lhs_constant), (rhs, rhs_constant)) if c is None]
    return b.build(inputs, [y]), inputs


@pytest.mark.parametrize("case", [
    dict(lhs_shape=(2, 1, 3, 4), rhs_shape=(1, 3, 4, 2), out_shape=(2, 3, 3, 2)),
    dict(lhs_shape=(4, 3), rhs_shape=(2, 5, 4), out_shape=(2, 3, 5), adj_x=True, adj_y=True),
    dict(lhs_shape=(2, 3, 7), rhs_shape=(7, 5), out_shape=(2, 3, 5), dtype="int16",
         rhs_quant=(0.001, 0)),
    dict(lhs_shape=(2, 3, 7), rhs_shape=(7, 5), out_shape=(2, 3, 5), dtype="int16",
         rhs_quant=(0.001, 0),
         rhs_constant=np.random.default_rng(1).integers(-32768, 32768, (7, 5), dtype=np.int16)),
    dict(lhs_shape=(3, 4), rhs_shape=(2, 4, 6), out_shape=(2, 3, 6),
         lhs_constant=np.random.default_rng(2).integers(-128, 128, (3, 4), dtype=np.int8)),
], ids=["both_broadcast", "rank2_adj_xy", "s16_rank2_rhs", "s16_constant_rhs", "constant_lhs"])
def test_hand_built_batch_matmul_is_bit_exact(case, tmp_path):
    data, _ = _matmul(**case)
    path = tmp_path / "bmm.tflite"
    path.write_bytes(data)
    assert_bit_exact(path, n=6, seed=5, tmp_path=tmp_path)


def test_two_constants_are_multiplied_at_compile_time(tmp_path):
    """BATCH_MATMUL of two constants feeding an ADD: only the ADD runs, and the result is
    TFLM's (which multiplies on every invocation)."""
    rng = np.random.default_rng(8)
    b = ModelBuilder()
    lhs = b.constant("lhs", rng.integers(-128, 128, (2, 3, 4), dtype=np.int8), 0.02, 1)
    rhs = b.constant("rhs", rng.integers(-128, 128, (2, 5, 4), dtype=np.int8), 0.03, -2)
    prod = b.tensor("prod", (2, 3, 5), "int8", 0.1, 3)
    x = b.tensor("x", (2, 3, 5), "int8", 0.1, 3)
    y = b.tensor("y", (2, 3, 5), "int8", 0.2, 0)
    b.operator("BATCH_MATMUL", [lhs, rhs], [prod], "BatchMatMulOptions", adjX=False, adjY=True)
    b.operator("ADD", [x, prod], [y], "AddOptions")
    path = tmp_path / "const.tflite"
    path.write_bytes(b.build([x], [y]))
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["ADD"]
    assert_bit_exact(path, n=4, seed=1, tmp_path=tmp_path)


def _refusal(tmp_path, **kwargs) -> str:
    data, _ = _matmul(**kwargs)
    path = tmp_path / "refused.tflite"
    path.write_bytes(data)
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def test_refuses_batch_dimensions_that_do_not_broadcast(tmp_path):
    message = _refusal(tmp_path, lhs_shape=(2, 3, 4), rhs_shape=(3, 4, 5), out_shape=(3, 3, 5))
    assert "batch dimension 0 is 2 in lhs [2, 3, 4] and 3 in rhs [3, 4, 5]" in message


def test_refuses_different_inner_dimensions(tmp_path):
    message = _refusal(tmp_path, lhs_shape=(3, 4), rhs_shape=(5, 6), out_shape=(3, 6))
    assert "different inner dimensions 4 and 5" in message


def test_refuses_rank_6(tmp_path):
    message = _refusal(tmp_path, lhs_shape=(1, 1, 1, 1, 3, 4), rhs_shape=(4, 5),
                       out_shape=(1, 1, 1, 1, 3, 5))
    assert "has rank 6; TFLM multiplies ranks 2 to 5" in message


def test_refuses_a_per_channel_constant_rhs(tmp_path):
    b = ModelBuilder()
    lhs = b.tensor("lhs", (3, 4), "int8", 0.02, 0)
    rhs = b.constant("rhs", np.ones((4, 5), np.int8), scale=[0.01] * 4, zero_point=[0] * 4)
    y = b.tensor("y", (3, 5), "int8", 0.1, 0)
    b.operator("BATCH_MATMUL", [lhs, rhs], [y], "BatchMatMulOptions")
    path = tmp_path / "pc.tflite"
    path.write_bytes(b.build([lhs], [y]))
    with pytest.raises(ModelError, match="must be quantized per tensor"):
        compile_model(path)


def test_refuses_mixed_operand_types(tmp_path):
    message = _refusal(tmp_path, lhs_shape=(3, 4), rhs_shape=(4, 5), out_shape=(3, 5),
                       dtype="int16", rhs_dtype="int8", rhs_quant=(0.01, 0))
    assert "rhs 'rhs' is int8; only int16 is supported" in message
