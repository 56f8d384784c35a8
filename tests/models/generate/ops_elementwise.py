"""Single-operator test models for ADD, MUL, QUANTIZE, DEQUANTIZE, LOGISTIC, TANH, RELU, RELU6 and
HARD_SWISH.

Run with a Python that has tensorflow-cpu:
    /tmp/tfvenv/bin/python tests/models/generate/ops_elementwise.py
Writes tests/models/ops/*.tflite. Every model is seeded, so reruns give byte-identical files.

Each input gets its own calibration range, so the two inputs of ADD/MUL end up with different
scales and zero points (the interesting case for the rescaling arithmetic). The unary activation
models have exactly 256 input elements so a test can feed every int8 value at once.

Two models are assembled directly as flatbuffers: an int8 -> int8 QUANTIZE (a requantization),
which the converter only emits in larger graphs, with scales chosen to rescale down and up.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import check_supported_ops, op_names, save, seed_everything  # noqa: E402

# 4 * 8 * 8 = 256 elements: room for every int8 value in one tensor.
UNARY_SHAPE = (4, 8, 8)


def _convert(model, seed: int, ranges: list[tuple[float, float]], inputs_int8: bool = True,
             samples: int = 64) -> bytes:
    """Full-integer quantization with a seeded uniform calibration set, one range per input."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    shapes = [tuple(int(d) for d in t.shape[1:]) for t in model.inputs]
    assert len(ranges) == len(shapes), (ranges, shapes)

    def representative():
        for _ in range(samples):
            yield [rng.uniform(lo, hi, (1,) + s).astype(np.float32)
                   for (lo, hi), s in zip(ranges, shapes)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if inputs_int8:
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    return converter.convert()


def _save(name: str, data: bytes, expected_ops: list[str]) -> None:
    """Save after checking the converter emitted exactly the operators the test is about."""
    check_supported_ops(name, data)
    ops = op_names(data)
    if ops != expected_ops:
        raise SystemExit(f"{name}: expected operators {expected_ops}, converter emitted {ops}")
    save(f"ops/{name}.tflite", data)


def _inputs(*shapes):
    import tensorflow as tf

    # Names that sort in positional order: the converter orders inputs by name, and the
    # calibration data is given positionally.
    return [tf.keras.Input(shape=s, batch_size=1, name=f"in{i}") for i, s in enumerate(shapes)]


def add_models() -> None:
    import tensorflow as tf

    K = tf.keras
    seed = 500
    seed_everything(seed)
    a, b = _inputs((4, 4, 8), (4, 4, 8))
    _save("add_same", _convert(K.Model([a, b], K.layers.Add()([a, b])), seed,
                               [(-2.0, 0.5), (-0.3, 1.0)]), ["ADD"])

    seed = 501
    seed_everything(seed)
    a, b = _inputs((4, 4, 8), (4, 4, 8))
    out = K.layers.ReLU()(K.layers.Add()([a, b]))  # fused into ADD
    _save("add_same_relu", _convert(K.Model([a, b], out), seed, [(-1.0, 1.0), (-3.0, 3.0)]),
          ["ADD"])

    seed = 502
    seed_everything(seed)
    a, b = _inputs((4, 4, 8), (4, 4, 8))
    out = K.layers.ReLU(max_value=6.0)(K.layers.Add()([a, b]))  # fused RELU6
    _save("add_same_relu6", _convert(K.Model([a, b], out), seed, [(-5.0, 5.0), (-2.0, 6.0)]),
          ["ADD"])

    # A constant per-channel operand (last dimension): broadcast along the outer dimensions.
    seed = 503
    seed_everything(seed)
    (a,) = _inputs((4, 4, 8))
    channel = tf.constant(np.linspace(-1.5, 2.0, 8).astype(np.float32))
    _save("add_channel_const", _convert(K.Model(a, a + channel), seed, [(-1.0, 1.0)]), ["ADD"])

    # A scalar constant operand.
    seed = 504
    seed_everything(seed)
    (a,) = _inputs((3, 5, 6))
    _save("add_scalar_const", _convert(K.Model(a, a + 0.7), seed, [(-1.0, 2.0)]), ["ADD"])

    # General broadcasting between two inputs: (1,4,1,8) + (1,1,5,1) -> (1,4,5,8).
    seed = 505
    seed_everything(seed)
    a, b = _inputs((4, 1, 8), (1, 5, 1))
    out = K.layers.Lambda(lambda t: t[0] + t[1])([a, b])
    _save("add_bcast_general", _convert(K.Model([a, b], out), seed, [(-1.0, 1.0), (-4.0, 2.0)]),
          ["ADD"])

    # Input 0 is the broadcast operand: (1,1,1,8) + (1,4,4,8).
    seed = 506
    seed_everything(seed)
    a, b = _inputs((1, 1, 8), (4, 4, 8))
    out = K.layers.Lambda(lambda t: t[0] + t[1])([a, b])
    _save("add_bcast_first", _convert(K.Model([a, b], out), seed, [(-0.5, 0.5), (-1.0, 3.0)]),
          ["ADD"])


def mul_models() -> None:
    import tensorflow as tf

    K = tf.keras
    seed = 510
    seed_everything(seed)
    a, b = _inputs((4, 4, 8), (4, 4, 8))
    _save("mul_same", _convert(K.Model([a, b], K.layers.Multiply()([a, b])), seed,
                               [(-2.0, 0.5), (-0.3, 1.0)]), ["MUL"])

    seed = 511
    seed_everything(seed)
    a, b = _inputs((4, 4, 8), (4, 4, 8))
    out = K.layers.ReLU()(K.layers.Multiply()([a, b]))  # fused into MUL
    _save("mul_same_relu", _convert(K.Model([a, b], out), seed, [(-1.0, 1.0), (-3.0, 3.0)]),
          ["MUL"])

    seed = 512
    seed_everything(seed)
    (a,) = _inputs((4, 4, 8))
    channel = tf.constant(np.linspace(-1.5, 2.0, 8).astype(np.float32))
    _save("mul_channel_const", _convert(K.Model(a, a * channel), seed, [(-1.0, 1.0)]), ["MUL"])

    seed = 513
    seed_everything(seed)
    (a,) = _inputs((3, 5, 6))
    _save("mul_scalar_const", _convert(K.Model(a, a * 0.7), seed, [(-1.0, 2.0)]), ["MUL"])

    seed = 514
    seed_everything(seed)
    a, b = _inputs((4, 1, 8), (1, 5, 1))
    out = K.layers.Lambda(lambda t: t[0] * t[1])([a, b])
    _save("mul_bcast_general", _convert(K.Model([a, b], out), seed, [(-1.0, 1.0), (-4.0, 2.0)]),
          ["MUL"])


def activation_models() -> None:
    import tensorflow as tf

    K = tf.keras
    cases = [
        # name, layer, calibration range, operator
        ("logistic", K.layers.Activation("sigmoid"), (-6.0, 6.0), "LOGISTIC"),
        ("logistic_narrow", K.layers.Activation("sigmoid"), (-0.5, 1.5), "LOGISTIC"),
        ("tanh", K.layers.Activation("tanh"), (-3.0, 3.0), "TANH"),
        ("tanh_wide", K.layers.Activation("tanh"), (-10.0, 4.0), "TANH"),
        ("relu", K.layers.ReLU(), (-2.0, 3.0), "RELU"),
        ("relu_negative", K.layers.ReLU(), (-6.0, -0.5), "RELU"),
        ("relu6", K.layers.ReLU(max_value=6.0), (-4.0, 9.0), "RELU6"),
        ("relu6_small", K.layers.ReLU(max_value=6.0), (-1.0, 2.0), "RELU6"),
        ("hard_swish", K.layers.Activation("hard_swish"), (-5.0, 5.0), "HARD_SWISH"),
        ("hard_swish_asym", K.layers.Activation("hard_swish"), (-1.0, 6.0), "HARD_SWISH"),
        ("hard_swish_wide", K.layers.Activation("hard_swish"), (-40.0, 60.0), "HARD_SWISH"),
    ]
    for i, (name, layer, span, opcode) in enumerate(cases):
        seed = 520 + i
        seed_everything(seed)
        (a,) = _inputs(UNARY_SHAPE)
        _save(name, _convert(K.Model(a, layer(a)), seed, [span]), [opcode])


def float_io_models() -> None:
    """Float inputs and outputs: QUANTIZE at every input, DEQUANTIZE at the output."""
    import tensorflow as tf

    K = tf.keras
    seed = 540
    seed_everything(seed)
    a, b = _inputs((4, 4, 8), (4, 4, 8))
    _save("float_io_add", _convert(K.Model([a, b], K.layers.Add()([a, b])), seed,
                                   [(-2.0, 1.0), (-0.5, 0.5)], inputs_int8=False),
          ["QUANTIZE", "QUANTIZE", "ADD", "DEQUANTIZE"])

    seed = 541
    seed_everything(seed)
    (a,) = _inputs(UNARY_SHAPE)
    _save("float_io_logistic", _convert(K.Model(a, K.layers.Activation("sigmoid")(a)), seed,
                                        [(-4.0, 4.0)], inputs_int8=False),
          ["QUANTIZE", "LOGISTIC", "DEQUANTIZE"])


def _single_op_model(opcode: str, version: int, shape: tuple[int, ...],
                     input_quant: tuple[float, int], output_quant: tuple[float, int]) -> bytes:
    """A one-operator int8 -> int8 model built directly with the schema's object API."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as schema

    def tensor(name: str, buffer: int, quant: tuple[float, int]):
        t = schema.TensorT()
        t.shape = list(shape)
        t.type = schema.TensorType.INT8
        t.buffer = buffer
        t.name = name
        t.quantization = schema.QuantizationParametersT()
        t.quantization.scale = [float(np.float32(quant[0]))]
        t.quantization.zeroPoint = [int(quant[1])]
        return t

    code = schema.OperatorCodeT()
    code.builtinCode = getattr(schema.BuiltinOperator, opcode)
    code.deprecatedBuiltinCode = min(code.builtinCode, 127)
    code.version = version

    op = schema.OperatorT()
    op.opcodeIndex = 0
    op.inputs = [0]
    op.outputs = [1]

    graph = schema.SubGraphT()
    graph.tensors = [tensor("input", 1, input_quant), tensor("output", 2, output_quant)]
    graph.inputs = [0]
    graph.outputs = [1]
    graph.operators = [op]
    graph.name = "main"

    model = schema.ModelT()
    model.version = 3
    model.operatorCodes = [code]
    model.subgraphs = [graph]
    # Buffer 0 is the conventional empty sentinel; activations get empty buffers of their own.
    model.buffers = [schema.BufferT() for _ in range(3)]
    model.description = "microbuild test model"

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def requantize_models() -> None:
    # Scale shrinks (multiplier > 1) and grows (multiplier < 1), with zero points moving.
    save("ops/requantize_s8_down.tflite",
         _single_op_model("QUANTIZE", 2, (1,) + UNARY_SHAPE, (0.05, 10), (0.03, -20)))
    save("ops/requantize_s8_up.tflite",
         _single_op_model("QUANTIZE", 2, (1,) + UNARY_SHAPE, (0.02, -3), (0.1, 5)))


if __name__ == "__main__":
    add_models()
    mul_models()
    activation_models()
    float_io_models()
    requantize_models()
