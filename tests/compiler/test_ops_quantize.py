"""QUANTIZE and DEQUANTIZE in every dtype pair TFLM's kernels take, uint8 model boundaries, and
DEQUANTIZE of constants (float16 weights) folded at compile time.

The models are tests/models/generate/ops_quantize.py's (one per pair, 256 elements, plus a mixed
graph). Each is compared bit for bit with the tflite-micro interpreter on inputs that cover the
input type: every uint8/int8 value, int16 and int32 values of every magnitude, float32 values on
rounding ties and beyond the output range. The same models join the Cortex-M7 QEMU sweep
(tests/firmware/test_sweep_qemu.py), which runs them over RPC with uint8 inputs and outputs.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import run_on_host, run_tflm
from quantize_support import bits, covering_input, covering_inputs

from microbuild.compiler import compile_model
from microbuild.compiler.ops.quantize import _KERNELS as QUANTIZE_PAIRS
from microbuild.compiler.prepare import prepare_graph
from microbuild.errors import ModelError
from microbuild.model.reader import read_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models" / "generate"))
import ops_quantize  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models" / "ops"
NAMES = ops_quantize.model_names()
# gcc builds every model; clang (a second compiler's view of the same C) the kernels this file
# added and the mixed graph, to keep the test's cost down.
CLANG_NAMES = ["quantize_u8_s8", "quantize_s8_u8", "quantize_s32_s16", "quantize_s32_s8",
               "dequantize_u8", "mixed_quantize_chain"]
DTYPES = ("float32", "float16", "uint8", "int8", "int16", "int32")


def test_the_models_cover_every_pair_tflm_takes():
    pairs = set()
    for name in NAMES:
        ops = read_model(MODELS / f"{name}.tflite").operators
        if len(ops) == 1:
            g = read_model(MODELS / f"{name}.tflite")
            pairs.add((ops[0].opcode, g.tensor(ops[0].inputs[0]).dtype,
                       g.tensor(ops[0].outputs[0]).dtype))
    assert {(a, b) for op, a, b in pairs if op == "QUANTIZE"} == set(QUANTIZE_PAIRS)
    assert {a for op, a, b in pairs if op == "DEQUANTIZE"} == {"uint8", "int8", "int16"}


@pytest.mark.parametrize("name, cc", [(n, "gcc") for n in NAMES] +
                         [(n, "clang") for n in CLANG_NAMES])
def test_bit_exact_with_tflm_over_the_input_type(name, cc, tmp_path):
    path = MODELS / f"{name}.tflite"
    inputs = covering_inputs(path)
    want = [run_tflm(path, [x]) for x in inputs]
    got = run_on_host(path, [[x] for x in inputs], cc=cc, workdir=tmp_path)
    for x, w, g in zip(inputs, want, got):
        w, g = np.asarray(w[0]).reshape(g[0].shape), g[0]
        assert w.dtype == g.dtype, (name, w.dtype, g.dtype)
        bad = np.flatnonzero(bits(w) != bits(g))
        assert bad.size == 0, (f"{name} ({cc}): {bad.size} of {w.size} differ, first input "
                               f"{x.ravel()[bad[0]]}: C {g.ravel()[bad[0]]} vs TFLM "
                               f"{w.ravel()[bad[0]]}")


def _single_op_model(opcode: str, src: str, dst: str) -> bytes:
    quant = {"uint8": (0.05, 131), "int8": (0.05, 3), "int16": (0.001, 0), "int32": (0.0001, 0),
             "float32": None, "float16": None}
    return ops_quantize.single_op(opcode, src, quant[src], dst, quant[dst])


def _tflm_takes(data: bytes, src: str) -> bool:
    from tflite_micro import runtime

    try:
        interpreter = runtime.Interpreter.from_bytes(data, arena_size=1 << 16)
        interpreter.set_input(np.zeros(ops_quantize.SHAPE, dtype=src), 0)
        interpreter.invoke()
    except Exception:  # noqa: BLE001 - TFLM refuses in prepare or in invoke
        return False
    return True


def test_microbuild_takes_exactly_the_pairs_tflm_takes(capfd):
    """Every (input, output) pair of the six types: microbuild compiles it when TFLM runs it and
    refuses it, naming the pair, when TFLM does not."""
    for opcode, (src, dst) in itertools.product(("QUANTIZE", "DEQUANTIZE"),
                                                itertools.product(DTYPES, DTYPES[:1] + DTYPES[2:])):
        if src == dst == "float32":
            continue
        data = _single_op_model(opcode, src, dst)
        tflm = _tflm_takes(data, src)
        try:
            compile_model(data)
            ours, message = True, ""
        except ModelError as err:
            ours, message = False, str(err)
        assert ours == tflm, f"{opcode} {src} -> {dst}: TFLM {tflm}, microbuild {ours}: {message}"
        if not ours:
            assert "op 0" in message and (src in message or dst in message), message
    capfd.readouterr()  # TFLM's own refusals on stderr


# ---- DEQUANTIZE of constants ------------------------------------------------------------------
def _constant_dequantize_graph(values: np.ndarray, quant):
    """A graph whose DEQUANTIZE reads a constant and feeds a run-time op (so it is kept)."""
    b = ModelBuilder("microbuild test: DEQUANTIZE of a constant")
    kwargs = {} if quant is None else {"scale": quant[0], "zero_point": quant[1]}
    w = b.constant("w", values, **kwargs)
    wf = b.tensor("w_float", values.shape, "float32")
    b.operator("DEQUANTIZE", [w], [wf])
    return read_model(b.build(inputs=[], outputs=[wf])), wf


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
def test_dequantize_of_an_integer_constant_folds_to_tflms_values(dtype):
    name = {"uint8": "dequantize_u8", "int8": "dequantize_s8", "int16": "dequantize_s16"}[dtype]
    path = MODELS / f"{name}.tflite"
    src_q = ops_quantize.DEQUANTIZE_INPUTS[name][1]
    x = covering_input(dtype, ops_quantize.SHAPE, None)
    graph, t = _constant_dequantize_graph(x, src_q)
    folded = prepare_graph(graph)
    assert not [op for op in folded.operators if op.opcode == "DEQUANTIZE"]
    got = folded.tensor(t).data
    want = np.asarray(run_tflm(path, [x])[0]).reshape(got.shape)
    assert got.dtype == np.float32
    assert np.array_equal(bits(got), bits(want))


def _float16_by_definition(patterns: np.ndarray) -> np.ndarray:
    """IEEE 754 binary16 decoded from sign, exponent and fraction, independently of numpy's cast
    (infinities and NaN aside, which weights never hold)."""
    sign = np.where(patterns >> 15, -1.0, 1.0)
    exponent = (patterns >> 10) & 0x1F
    fraction = (patterns & 0x3FF).astype(np.float64)
    normal = np.ldexp(1.0 + fraction / 1024.0, exponent.astype(np.int64) - 15)
    subnormal = np.ldexp(fraction / 1024.0, -14)
    return (sign * np.where(exponent == 0, subnormal, normal)).astype(np.float32)


def test_dequantize_of_float16_weights_folds_exactly():
    """Every finite float16 value, as a float16 model's weights hold them: the folded float32
    constant is the float16 value exactly (TFLite's float16 -> float32 widening), signed zeros
    and subnormals included."""
    patterns = np.arange(1 << 16, dtype=np.uint16)
    finite = patterns[((patterns >> 10) & 0x1F) != 0x1F]
    values = finite.view(np.float16)
    graph, t = _constant_dequantize_graph(values, None)
    folded = prepare_graph(graph)
    assert not folded.operators
    got = folded.tensor(t).data
    assert got.dtype == np.float32
    assert np.array_equal(bits(got), bits(_float16_by_definition(finite)))
    assert any("DEQUANTIZE" in note for note in folded.notes)


def test_float16_at_run_time_is_refused_as_tflm_refuses_it():
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "float16")
    y = b.tensor("y", (1, 8), "float32")
    b.operator("DEQUANTIZE", [x], [y])
    with pytest.raises(ModelError) as err:
        compile_model(b.build(inputs=[x], outputs=[y]))
    assert "DEQUANTIZE (op 0): has float16 tensors at run time" in str(err.value)
    assert "only as a constant" in str(err.value)


# ---- uint8 boundaries --------------------------------------------------------------------------
def test_uint8_inputs_and_outputs_in_the_generated_header(tmp_path):
    model = compile_model(MODELS / "quantize_u8_s8_camera.tflite", prefix="cam")
    assert model.inputs[0].dtype == "uint8"
    model.write(tmp_path)
    text = (tmp_path / "cam.h").read_text()
    assert "#define CAM_INPUT0_TYPE uint8_t" in text, text
    out = compile_model(MODELS / "quantize_s8_u8_softmax.tflite", prefix="soft")
    assert out.outputs[0].dtype == "uint8"
    out.write(tmp_path)
    assert "#define SOFT_OUTPUT0_TYPE uint8_t" in (tmp_path / "soft.h").read_text()


# ---- models from the stock converter (tests/models/generate/keras_uint8.py) ----------------------
BOUNDARIES = Path(__file__).resolve().parent.parent / "models" / "boundaries"


def test_float16_model_weights_fold_to_tflites_dequantize_output():
    """The converter's float16 quantization: every DEQUANTIZE of a float16 weight folds, and the
    float32 constant is bit for bit what TFLite's DEQUANTIZE kernel gave (saved by the generator;
    TFLM's DEQUANTIZE has no float16 input, so TFLM itself refuses this model)."""
    graph = read_model(BOUNDARIES / "keras_float16.tflite")
    dequantized = [graph.tensor(op.outputs[0]).name for op in graph.operators
                   if op.opcode == "DEQUANTIZE"]
    assert len(dequantized) == 4
    prepared = prepare_graph(graph)
    assert [op.opcode for op in prepared.operators] == ["FULLY_CONNECTED"] * 2
    by_name = {t.name: t for t in prepared.tensors}
    with np.load(BOUNDARIES / "keras_float16_dequantized.npz") as reference:
        assert sorted(reference.files) == sorted(dequantized)
        for name in dequantized:
            got = by_name[name].data
            assert got is not None and got.dtype == np.float32, name
            assert np.array_equal(bits(got), bits(reference[name])), name


def test_camera_model_compiles_with_uint8_boundaries(tmp_path):
    """inference_input_type / inference_output_type = tf.uint8: a uint8 -> int8 QUANTIZE first,
    an int8 -> uint8 QUANTIZE last, uint8_t in the generated header on both sides. (Its outputs
    are compared with TFLM through `microbuild run`: tests/rpc/test_uint8_io.py.)"""
    path = BOUNDARIES / "keras_camera_uint8.tflite"
    ops = [op.opcode for op in read_model(path).operators]
    assert ops[0] == ops[-1] == "QUANTIZE"
    model = compile_model(path, prefix="cam")
    assert [s.dtype for s in model.inputs + model.outputs] == ["uint8", "uint8"]
    model.write(tmp_path)
    header = (tmp_path / "cam.h").read_text()
    assert "#define CAM_INPUT0_TYPE uint8_t" in header
    assert "#define CAM_OUTPUT0_TYPE uint8_t" in header
