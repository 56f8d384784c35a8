"""16x8 SOFTMAX (int16 -> int16): the sweep (Keras Softmax through the 16x8 converter, several
shapes and betas) bit-exact with TFLM, the two lookup tables checked against TFLM's generation
and exhaustively through TFLM itself, refusals."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, run_on_host, run_tflm

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

ROOT = Path(__file__).resolve().parent.parent.parent
MODELS = ROOT / "tests" / "models"
SWEEP = sorted((MODELS / "ops").glob("softmax_s16_*.tflite"))
sys.path.insert(0, str(MODELS / "generate"))
sys.path.insert(0, str(ROOT / "tools"))
from tflite_builder import ModelBuilder  # noqa: E402


def test_the_softmax16_sweep_is_there():
    assert {p.stem for p in SWEEP} == {
        "softmax_s16_1x10", "softmax_s16_5x12", "softmax_s16_3x4x7_wide",
        "softmax_s16_1x64_narrow", "softmax_s16_1x10_beta0p5", "softmax_s16_1x10_beta2",
        "softmax_s16_1x300", "softmax_s16_1x12_times3"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_softmax16_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=8, seed=28, cc=cc, tmp_path=tmp_path)


def test_committed_tables_are_tflm_gen_lut():
    """runtime/kernels/softmax16_tables.c is what tools/make_softmax16_tables.py computes."""
    import make_softmax16_tables as tool

    source = (ROOT / "runtime" / "kernels" / "softmax16_tables.c").read_text()
    exp_table, reciprocal = tool.tables()
    assert source == tool.c_source(exp_table, reciprocal)
    arrays = re.findall(r"\[MB_SOFTMAX16_LUT_SIZE\] = \{([^}]*)\}", source)
    assert [int(v) for v in arrays[0].split(",")] == exp_table
    # exp(0) is 1.0, which saturates at 32767; 1 / (1 + 0) likewise, 1 / (1 + 1) is 16384.
    assert exp_table[-1] == 32767 and reciprocal[0] == 32767 and reciprocal[-1] == 16384


def _softmax(shape, input_scale, beta=1.0, output_scale=1.0 / 32768, output_zp=0) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", shape, "int16", input_scale, 0)
    y = b.tensor("y", shape, "int16", output_scale, output_zp)
    b.operator("SOFTMAX", [x], [y], "SoftmaxOptions", beta=beta)
    return b.build([x], [y])


def _compare(tmp_path, data: bytes, x: np.ndarray) -> np.ndarray:
    path = tmp_path / "softmax16.tflite"
    path.write_bytes(data)
    got = run_on_host(path, [[x]], workdir=tmp_path)[0][0]
    want = np.asarray(run_tflm(path, [x])[0]).reshape(got.shape)
    bad = np.argwhere(got != want)
    assert len(bad) == 0, (f"{len(bad)} of {got.size} outputs differ; first at "
                           f"{[tuple(i) for i in bad[:4]]}: C {got[tuple(bad[0])]} vs TFLM "
                           f"{want[tuple(bad[0])]}")
    return got


def test_every_exp_table_input_and_reciprocal_segment(tmp_path):
    """Input scale 10 / 65535 with beta 1 makes the rescaling exact (multiplier 2^30, shift 1),
    so rows (32767, 32767 - d) for d = 0..65535 look up every int16 value in the exp table; the
    sums of the two exps sweep the reciprocal table from 1 / (1 + 0) to 1 / (1 + 1). An entry off
    by one in either table changes outputs here."""
    d = np.arange(65536, dtype=np.int32)
    x = np.stack([np.full(65536, 32767), 32767 - d], axis=1).astype(np.int16)
    got = _compare(tmp_path, _softmax((65536, 2), 10.0 / 65535), x)
    assert len(np.unique(got[:, 1])) > 14000 and len(np.unique(got[:, 0])) > 8000, \
        (len(np.unique(got[:, 1])), len(np.unique(got[:, 0])))


@pytest.mark.parametrize("input_scale,beta", [(0.001, 1.0), (3e-5, 1.0), (2e-4, 0.7),
                                              (1e-6, 3.0), (0.05, 1.0)],
                         ids=["left_shift", "right_shift", "beta0p7", "tiny_scale", "coarse"])
def test_rescaling_and_long_rows(input_scale, beta, tmp_path):
    rng = np.random.default_rng(11)
    x = rng.integers(-32768, 32768, (400, 9), dtype=np.int16)
    # Rows close together too, where several exps are large and the sum has more bits.
    x[200:] = (x[200:] // 512).astype(np.int16)
    _compare(tmp_path, _softmax((400, 9), input_scale, beta), x)


def test_a_wide_row_sums_many_exps(tmp_path):
    """3000 values near the maximum: a sum of ~2^26, far from the one-or-two-exp cases."""
    rng = np.random.default_rng(12)
    x = rng.integers(32000, 32768, (2, 3000), dtype=np.int16)
    _compare(tmp_path, _softmax((2, 3000), 1e-4), x)


def test_runs_in_place_when_the_input_dies(tmp_path):
    """ADD -> SOFTMAX: the sum dies at the softmax, which overwrites it (each element is read
    before it is written), and the result is still TFLM's."""
    b = ModelBuilder()
    x = b.tensor("x", (6, 10), "int16", 0.0005, 0)
    t = b.tensor("t", (6, 10), "int16", 0.001, 0)
    y = b.tensor("y", (6, 10), "int16", 1.0 / 32768, 0)
    b.operator("ADD", [x, x], [t], "AddOptions")
    b.operator("SOFTMAX", [t], [y], "SoftmaxOptions", beta=1.0)
    path = tmp_path / "add_softmax16.tflite"
    path.write_bytes(b.build([x], [y]))
    compiled = compile_model(path)
    assert any(f"{kernel}(" in compiled.sources["model.c"]
               for kernel in ("mb_softmax_s16", "mb_softmax_s16_fast"))
    softmax = [op for op in compiled.summary()["ops"] if op["opcode"] == "SOFTMAX"][0]
    assert (softmax["index"], t, y) in compiled.plan.in_place
    assert_bit_exact(path, n=6, seed=3, tmp_path=tmp_path)


def test_refuses_another_output_quantization(tmp_path):
    with pytest.raises(ModelError, match="needs scale 1/32768 and zero point 0"):
        compile_model(_softmax((1, 10), 0.001, output_scale=1.0 / 65536))


def test_refuses_rows_longer_than_tflm_sums(tmp_path):
    with pytest.raises(ModelError, match="sums at most 65535 values"):
        compile_model(_softmax((1, 65536), 0.001))


def test_refuses_an_int8_output_for_int16_input(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (1, 10), "int16", 0.001, 0)
    y = b.tensor("y", (1, 10), "int8", 1.0 / 256, -128)
    b.operator("SOFTMAX", [x], [y], "SoftmaxOptions", beta=1.0)
    with pytest.raises(ModelError, match="int16 softmax gives int16"):
        compile_model(b.build([x], [y]))
