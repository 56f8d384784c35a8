"""Shared helpers for the scripts that make the committed test models.

Run with a Python that has ``tensorflow-cpu`` (it is a test-model tool only, never a dependency of
microbuild). Every model is seeded (weights, batch-norm statistics, calibration data) so rerunning
the scripts gives byte-identical .tflite files.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np

MODELS_DIR = Path(__file__).resolve().parent.parent  # tests/models/


def seed_everything(seed: int) -> None:
    import tensorflow as tf

    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    tf.keras.utils.set_random_seed(seed)


def randomize_batchnorm(model, seed: int) -> None:
    """Give every BatchNormalization layer seeded, non-trivial statistics so folding matters."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([
                rng.uniform(0.5, 1.5, gamma.shape).astype(np.float32),
                rng.uniform(-0.2, 0.2, beta.shape).astype(np.float32),
                rng.uniform(-0.2, 0.2, mean.shape).astype(np.float32),
                rng.uniform(0.5, 1.5, var.shape).astype(np.float32),
            ])


def randomize_biases(model, seed: int) -> None:
    """Keras initializes biases to zero; give them seeded values so the bias path is exercised."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        bias = getattr(layer, "bias", None)
        if bias is not None:
            bias.assign(rng.uniform(-0.3, 0.3, bias.shape).astype(np.float32))


def quantize_int8(model, seed: int, calibration_samples: int = 64, low: float = -1.0,
                  high: float = 1.0, inputs_int8: bool = True,
                  converter_options: dict | None = None) -> bytes:
    """Full-integer quantization with a seeded uniform calibration set; int8 inputs and outputs.

    ``converter_options`` sets extra TFLiteConverter attributes, e.g. TF 2.21's private switches
    for per-tensor weights: ``_experimental_disable_per_channel`` (CONV_2D, DEPTHWISE_CONV_2D) and
    ``_experimental_disable_per_channel_quantization_for_dense_layers`` (FULLY_CONNECTED)."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    input_shapes = [tuple(int(d) for d in t.shape[1:]) for t in model.inputs]

    def representative():
        for _ in range(calibration_samples):
            yield [rng.uniform(low, high, (1,) + s).astype(np.float32) for s in input_shapes]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if inputs_int8:
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    for name, value in (converter_options or {}).items():
        setattr(converter, name, value)
    return converter.convert()


def save(relative_path: str, data: bytes) -> Path:
    path = MODELS_DIR / relative_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    print(f"wrote {path.relative_to(MODELS_DIR.parent.parent)} ({len(data)} bytes)")
    return path


# The builtin operators microbuild's compiler lowers. A generated model that contains anything else
# would test the converter's quirks rather than the compiler, so generators check against this.
SUPPORTED_OPS = frozenset({
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD",
    "MUL", "SOFTMAX", "RESHAPE", "QUANTIZE", "DEQUANTIZE", "CONCATENATION", "PAD", "MEAN",
    "LOGISTIC", "TANH", "RELU", "RELU6", "HARD_SWISH",
})


def op_names(data: bytes) -> list[str]:
    """Builtin operator names of a .tflite flatbuffer, in execution order (subgraph 0)."""
    try:
        from tensorflow.lite.python import schema_py_generated as schema
    except ImportError:  # an environment without TensorFlow (the PyTorch generator's)
        from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    model = schema.Model.GetRootAsModel(data, 0)
    graph = model.Subgraphs(0)
    result = []
    for i in range(graph.OperatorsLength()):
        code = model.OperatorCodes(graph.Operators(i).OpcodeIndex())
        # Codes below 127 live in the deprecated int8 field; max() picks whichever is set.
        result.append(names[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())])
    return result


def check_supported_ops(name: str, data: bytes, allowed=SUPPORTED_OPS) -> None:
    """Fail loudly if the converter emitted an operator outside ``allowed``."""
    extra = sorted(set(op_names(data)) - set(allowed))
    if extra:
        raise SystemExit(f"{name}: converter emitted unsupported operators {extra}")
