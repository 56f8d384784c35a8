"""Single-operator UNIDIRECTIONAL_SEQUENCE_LSTM models.

Keras LSTM layers (fixed batch, several unit counts, sequence lengths, batch 2, time major) through
the stock int8 converter, and with tflite_builder what the converter does not emit: the 16x8
flavour (int16 activations, int64 biases: the converter says "Quantization to 16x8-bit not yet
supported for op: 'UNIDIRECTIONAL_SEQUENCE_LSTM'") and an int8 LSTM with zero points on the input
and hidden state, a cell scale of 2^-13 and a cell clip of 2.0 (a clip the converter never sets).

The converter fuses a Keras LSTM into UNIDIRECTIONAL_SEQUENCE_LSTM only for Keras 2 layers
(tf_keras, what TFLM's mnist_lstm example uses); TensorFlow 2.21's Keras 3 LSTM converts to a
WHILE loop and its int8 quantization crashes the converter. So this script runs with tf_keras
beside TensorFlow, without installing it into /work/tfenv:

    /work/tfenv/bin/pip install --target /tmp/tf_keras --no-deps tf_keras==2.21.0
    PYTHONPATH=/tmp/tf_keras /work/tfenv/bin/python tests/models/generate/ops_lstm.py

Keras 2's ``stateful=True`` LSTM crashes the int8 converter too (segmentation fault), but every
converted LSTM keeps its hidden and cell states in variable tensors that TFLM carries from one
invocation to the next until it is reset, whatever ``stateful`` said: the tests compare several
consecutive invocations with TFLM's. ``return_sequences=False`` gives the LSTM followed by a
STRIDED_SLICE of the last step; that model is kept in tests/models/lstm/ (outside the operator
sweep, which runs only ops microbuild compiles) until STRIDED_SLICE has a lowering.
"""

from __future__ import annotations

import importlib.util
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HAVE_TF_KERAS = importlib.util.find_spec("tf_keras") is not None
if HAVE_TF_KERAS:
    os.environ["TF_USE_LEGACY_KERAS"] = "1"  # tf.keras is Keras 2 (tf_keras): the fused LSTM

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402


def _convert(model, shape, seed: int, low: float, high: float) -> bytes:
    import tensorflow as tf

    rng = np.random.default_rng(seed)

    def representative():
        for _ in range(48):
            yield [rng.uniform(low, high, shape).astype(np.float32)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.int8
    return converter.convert()


def keras_lstm(name: str, *, seed: int, units: int, steps: int, features: int, batch: int = 1,
               time_major: bool = False, return_sequences: bool = True, gain: float = 1.0,
               drive: bool = False, low: float = -1.5, high: float = 2.0,
               folder: str = "ops") -> None:
    import tensorflow as tf

    if not tf.keras.__name__.startswith("tf_keras"):
        raise SystemExit(f"tf.keras is {tf.keras.__name__}, not tf_keras (Keras 2): install "
                         "tf_keras (see the docstring) so the converter fuses the LSTM")
    seed_everything(seed)
    # Keras's time-major input is (time, batch, features): Input's batch_size is then the time.
    shape = (steps, batch, features) if time_major else (batch, steps, features)
    x = tf.keras.Input(shape=shape[1:], batch_size=shape[0])
    layer = tf.keras.layers.LSTM(units, return_sequences=return_sequences, time_major=time_major)
    model = tf.keras.Model(x, layer(x))
    rng = np.random.default_rng(seed)
    kernel, recurrent, bias = layer.get_weights()
    # Seeded biases (Keras starts them at 0, the forget gate's at 1) and, with gain > 1, larger
    # weights that drive the gates and the cell state to saturation.
    bias = bias + rng.uniform(-0.5, 0.5, bias.shape).astype(np.float32) * gain
    if drive:
        # Input and forget gates held open, each unit's cell gate pushed to one sign: the cell
        # state grows by about 1 per step, past the converter's cell clip of 10.
        bias[:2 * units] += 5.0
        bias[2 * units:3 * units] += 3.0 * rng.choice([-1.0, 1.0], units)
    layer.set_weights([kernel * gain, recurrent * gain, bias])
    data = _convert(model, shape, seed, low, high)
    want = ["UNIDIRECTIONAL_SEQUENCE_LSTM"] + ([] if return_sequences else ["STRIDED_SLICE"])
    if op_names(data) != want:
        raise SystemExit(f"{name}: expected {want}, got {op_names(data)}")
    save(f"{folder}/{name}.tflite", data)


def build_lstm(*, seed: int, units: int, steps: int, features: int, batch: int, act: str,
               cell_scale_log2: int = -11, cell_clip: float = 10.0, hidden_zp: int = 0,
               input_zp: int = 0, drive: bool = False, activation: int = 4,
               cell_dtype: str = "int16", variable_states: bool = True, cifg: bool = False,
               peephole: bool = False, projection: bool = False, layer_norm: bool = False,
               per_channel: bool = False) -> bytes:
    """The converter's quantization of an LSTM (per-tensor symmetric weights, bias scale = input
    scale x weight scale, output = hidden state quantization, a power-of-two int16 cell state),
    with int8 or int16 (16x8: int64 biases, zero points 0) activations. ``drive``: biases that
    hold the input and forget gates open and push each cell gate to one sign, so the cell state
    grows to its clip. ``activation`` is the fused ActivationFunctionType (4: TANH); the other
    keywords make the LSTM variants TFLM's kernel does not run (the refusal tests use them)."""
    rng = np.random.default_rng(seed)
    bias_type = "int64" if act == "int16" else "int32"
    in_scale = 0.02 if act == "int8" else 0.0001
    hidden_scale = 1.0 / 128 if act == "int8" else 1.0 / 32768
    b = ModelBuilder()
    x = b.tensor("input", (batch, steps, features), act, in_scale, input_zp)
    inputs = [x]
    w_in, w_rec = [], []
    for gate in ("input", "forget", "cell", "output"):
        scale = float(rng.uniform(0.004, 0.012))
        w_in.append(b.constant(f"input_to_{gate}", rng.integers(-127, 128, (units, features),
                                                                dtype=np.int8), scale=scale))
    for gate in ("input", "forget", "cell", "output"):
        scale = float(rng.uniform(0.004, 0.012))
        if per_channel:
            scale = list(rng.uniform(0.004, 0.012, units))
        w_rec.append(b.constant(f"recurrent_to_{gate}", rng.integers(-127, 128, (units, units),
                                                                     dtype=np.int8), scale=scale))
    biases = []
    for gate, w in zip(("input", "forget", "cell", "output"), w_in):
        w_scale = b.tensors[w].quantization.scale[0]
        real = rng.uniform(-1.0, 1.0, units)
        if drive and gate in ("input", "forget"):
            real += 6.0
        elif drive and gate == "cell":
            real += 4.0 * rng.choice([-1.0, 1.0], units)
        biases.append(b.constant(f"{gate}_bias",
                                 np.round(real / (in_scale * w_scale)).astype(bias_type),
                                 scale=in_scale * w_scale))
    hidden = b.tensor("output_state", (batch, units), act, hidden_scale, hidden_zp,
                      variable=variable_states)
    cell = b.tensor("cell_state", (batch, units), cell_dtype, 2.0 ** cell_scale_log2, 0,
                    variable=variable_states)
    if cifg:
        w_in[0] = w_rec[0] = biases[0] = -1
    peep = [-1, -1, -1]
    if peephole:
        peep = [b.constant(f"cell_to_{g}", rng.integers(-300, 300, units, dtype=np.int16),
                           scale=0.001) for g in ("input", "forget", "output")]
    proj = [-1, -1]
    if projection:
        proj[0] = b.constant("projection", rng.integers(-127, 128, (units, units), dtype=np.int8),
                             scale=0.01)
    norm = [-1, -1, -1, -1]
    if layer_norm:
        norm = [b.constant(f"{g}_layer_norm", rng.integers(1, 3000, units, dtype=np.int16),
                           scale=0.0005) for g in ("input", "forget", "cell", "output")]
    inputs += w_in + w_rec + peep + biases + proj + [hidden, cell] + norm
    y = b.tensor("output", (batch, steps, units), act, hidden_scale, hidden_zp)
    b.operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], "UnidirectionalSequenceLSTMOptions",
               fusedActivationFunction=activation, cellClip=cell_clip, projClip=0.0,
               timeMajor=False)
    return b.build(inputs=[x], outputs=[y])


def built_lstm(name: str, **kwargs) -> None:
    save(f"ops/{name}.tflite", build_lstm(**kwargs))


def models() -> None:
    built_lstm("lstm_s16_u8", seed=2110, units=8, steps=5, features=6, batch=1, act="int16")
    built_lstm("lstm_s16_b2_u6", seed=2111, units=6, steps=4, features=3, batch=2, act="int16",
               cell_scale_log2=-12, cell_clip=0.0)
    built_lstm("lstm_clip_zp_u8", seed=2112, units=8, steps=6, features=5, batch=1,
               act="int8", cell_scale_log2=-13, cell_clip=2.0, hidden_zp=-7, input_zp=11,
               drive=True)
    if not HAVE_TF_KERAS:
        print("ops_lstm: the Keras LSTM models skipped, they need tf_keras beside TensorFlow "
              "(see this script's docstring)")
        return
    keras_lstm("lstm_u8", seed=2101, units=8, steps=5, features=6)
    keras_lstm("lstm_u1", seed=2102, units=1, steps=3, features=4)
    keras_lstm("lstm_u32_t12", seed=2103, units=32, steps=12, features=10)
    keras_lstm("lstm_b2_u12", seed=2104, units=12, steps=4, features=5, batch=2)
    keras_lstm("lstm_time_major_u8", seed=2105, units=8, steps=6, features=5, batch=3,
               time_major=True)
    # Weights x 4: saturated gates; the biases drive the cell state past the clip (10) within
    # the 20 steps.
    keras_lstm("lstm_saturated_u16", seed=2106, units=16, steps=20, features=8, gain=4.0,
               drive=True, low=-3.0, high=3.0)
    keras_lstm("lstm_last_u16", seed=2107, units=16, steps=7, features=4, return_sequences=False,
               folder="lstm")


if __name__ == "__main__":
    models()
