"""Small test models for CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D, PAD, PADV2, MEAN
and CONCATENATION, sweeping each operator's options.

Run with a Python that has tensorflow-cpu:  /tmp/tfvenv/bin/python tests/models/generate/ops_conv.py
Writes tests/models/ops/*.tflite. Every model is seeded, so reruns give byte-identical files. Each
model is checked to contain exactly the operators it is meant to test, because the converter decides
what a Keras layer becomes (GlobalAveragePooling2D is MEAN, ZeroPadding2D is PAD, ...).
"""

from __future__ import annotations

import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import op_names, quantize_int8, randomize_biases, save, seed_everything  # noqa: E402


def _convert(model, seed: int, per_channel: bool = True, low: float = -1.0,
             high: float = 1.0) -> bytes:
    """common.quantize_int8, optionally with one scale for a whole convolution filter (TF 2.21
    quantizes CONV_2D / DEPTHWISE_CONV_2D weights per output channel by default)."""
    options = None if per_channel else {"_experimental_disable_per_channel": True}
    return quantize_int8(model, seed, low=low, high=high, converter_options=options)


def _emit(name: str, data: bytes, expect: list[str]) -> None:
    """Save the model after checking the converter produced exactly the operators expected."""
    got = op_names(data)
    if got != expect:
        raise SystemExit(f"{name}: expected operators {expect}, the converter emitted {got}")
    save(f"ops/{name}.tflite", data)


def _single_layer(seed: int, input_shape, make_layer, batch: int = 1):
    """A one-layer model. ``make_layer`` builds the layer after seeding: Keras draws initializer
    seeds when a layer is created, so a layer made before seed_everything gets unseeded weights."""
    import tensorflow as tf

    seed_everything(seed)
    inp = tf.keras.Input(shape=input_shape, batch_size=batch)
    model = tf.keras.Model(inp, make_layer()(inp))
    randomize_biases(model, seed + 1)
    return model


def _lambda(fn):
    import tensorflow as tf

    return tf.keras.layers.Lambda(fn)


def conv_models() -> None:
    import tensorflow as tf

    def clip_n1_to_1(x):
        return tf.minimum(tf.maximum(x, -1.0), 1.0)

    cases = [
        # name, input (H, W, C), filters, kernel, strides, padding, dilation, activation, bias,
        # per-channel, batch
        ("conv_3x3_same_s1_relu_pc", (9, 9, 3), 4, (3, 3), (1, 1), "same", (1, 1), "relu", True,
         True, 1),
        ("conv_3x3_valid_s2_relu6_pc", (10, 9, 3), 5, (3, 3), (2, 2), "valid", (1, 1), "relu6",
         True, True, 1),
        ("conv_5x3_same_s2_none_pc", (11, 8, 2), 3, (5, 3), (2, 2), "same", (1, 1), None, True,
         True, 1),
        ("conv_1x1_nobias_pc", (6, 7, 5), 6, (1, 1), (1, 1), "valid", (1, 1), None, False, True,
         1),
        ("conv_3x3_dil2_same_pc", (9, 10, 3), 4, (3, 3), (1, 1), "same", (2, 2), "relu", True,
         True, 1),
        ("conv_3x3_dil2_valid_pc", (9, 9, 2), 3, (3, 3), (1, 1), "valid", (2, 2), None, True,
         True, 1),
        ("conv_2x4_same_s2x1_pc", (8, 7, 3), 4, (2, 4), (2, 1), "same", (1, 1), None, True, True,
         1),
        ("conv_4x4_same_s2_even_pc", (8, 8, 2), 3, (4, 4), (2, 2), "same", (1, 1), "relu6", True,
         True, 1),
        ("conv_3x3_same_s1_none_pt", (9, 9, 3), 4, (3, 3), (1, 1), "same", (1, 1), None, True,
         False, 1),
        ("conv_3x3_valid_s2_relu_pt", (10, 9, 3), 5, (3, 3), (2, 2), "valid", (1, 1), "relu",
         True, False, 1),
        ("conv_3x3_same_batch2_pc", (6, 6, 2), 3, (3, 3), (1, 1), "same", (1, 1), None, True,
         True, 2),
    ]
    for i, (name, shape, filters, kernel, strides, padding, dilation, act, bias, per_channel,
            batch) in enumerate(cases):
        model = _single_layer(1000 + i, shape, lambda: tf.keras.layers.Conv2D(
            filters, kernel, strides=strides, padding=padding, dilation_rate=dilation,
            activation=act, use_bias=bias), batch=batch)
        _emit(name, _convert(model, 1000 + i, per_channel=per_channel), ["CONV_2D"])

    # min(max(x, -1), 1) after a convolution fuses as RELU_N1_TO_1. A wider calibration range
    # makes the clamp bite.
    seed_everything(1050)
    inp = tf.keras.Input(shape=(7, 7, 3), batch_size=1)
    x = tf.keras.layers.Conv2D(4, 3, padding="same")(inp)
    model = tf.keras.Model(inp, _lambda(clip_n1_to_1)(x))
    randomize_biases(model, 1051)
    _emit("conv_3x3_same_relun1to1_pc", _convert(model, 1050, low=-3.0, high=3.0), ["CONV_2D"])

    # Grouped convolution: the filter's input depth is a fraction of the input's.
    model = _single_layer(1060, (7, 7, 6),
                          lambda: tf.keras.layers.Conv2D(6, 3, padding="same", groups=3))
    _emit("conv_3x3_same_groups3_pc", _convert(model, 1060), ["CONV_2D"])


def depthwise_models() -> None:
    import tensorflow as tf

    cases = [
        # name, input (H, W, C), kernel, strides, padding, multiplier, dilation, activation, bias,
        # per-channel
        ("dw_3x3_same_s1_relu_m1_pc", (9, 9, 4), (3, 3), (1, 1), "same", 1, (1, 1), "relu", True,
         True),
        ("dw_3x3_valid_s2_relu6_m2_pc", (10, 9, 3), (3, 3), (2, 2), "valid", 2, (1, 1), "relu6",
         True, True),
        ("dw_5x3_same_s2_nobias_m1_pc", (11, 8, 3), (5, 3), (2, 2), "same", 1, (1, 1), None, False,
         True),
        ("dw_3x3_dil2_same_m2_pc", (9, 9, 2), (3, 3), (1, 1), "same", 2, (2, 2), None, True, True),
        ("dw_3x3_same_s2_m3_pc", (8, 8, 2), (3, 3), (2, 2), "same", 3, (1, 1), "relu", True,
         True),
        ("dw_3x3_same_s1_none_m1_pt", (9, 9, 4), (3, 3), (1, 1), "same", 1, (1, 1), None, True,
         False),
        ("dw_3x3_valid_s1_relu_m2_pt", (7, 8, 3), (3, 3), (1, 1), "valid", 2, (1, 1), "relu", True,
         False),
        # Wide enough for the kernel's 8-channel blocks plus a leftover tail.
        ("dw_3x3_dil2_same_m1_c20_pc", (9, 9, 20), (3, 3), (1, 1), "same", 1, (2, 2), "relu", True,
         True),
        ("dw_3x3_same_s2_m1_c24_pt", (10, 7, 24), (3, 3), (2, 2), "same", 1, (1, 1), None, True,
         False),
        ("dw_5x5_valid_s1_m1_c17_nobias_pc", (8, 8, 17), (5, 5), (1, 1), "valid", 1, (1, 1),
         "relu6", False, True),
    ]
    for i, (name, shape, kernel, strides, padding, mult, dilation, act, bias,
            per_channel) in enumerate(cases):
        model = _single_layer(1100 + i, shape, lambda: tf.keras.layers.DepthwiseConv2D(
            kernel, strides=strides, padding=padding, depth_multiplier=mult,
            dilation_rate=dilation, activation=act, use_bias=bias))
        _emit(name, _convert(model, 1100 + i, per_channel=per_channel), ["DEPTHWISE_CONV_2D"])


def pooling_models() -> None:
    import tensorflow as tf

    cases = [
        # name, layer class, input (H, W, C), pool size, strides, padding
        ("avgpool_2x2_valid_s2", tf.keras.layers.AveragePooling2D, (8, 8, 3), (2, 2), (2, 2),
         "valid"),
        ("avgpool_3x3_same_s2", tf.keras.layers.AveragePooling2D, (9, 9, 3), (3, 3), (2, 2),
         "same"),
        ("avgpool_3x3_same_s1", tf.keras.layers.AveragePooling2D, (7, 6, 2), (3, 3), (1, 1),
         "same"),
        ("avgpool_3x2_valid_s1", tf.keras.layers.AveragePooling2D, (7, 7, 4), (3, 2), (1, 1),
         "valid"),
        ("avgpool_5x5_valid_s1_global", tf.keras.layers.AveragePooling2D, (5, 5, 8), (5, 5),
         (1, 1), "valid"),
        ("maxpool_2x2_valid_s2", tf.keras.layers.MaxPooling2D, (8, 8, 3), (2, 2), (2, 2),
         "valid"),
        ("maxpool_3x3_same_s2", tf.keras.layers.MaxPooling2D, (9, 9, 3), (3, 3), (2, 2), "same"),
        ("maxpool_3x3_same_s1", tf.keras.layers.MaxPooling2D, (7, 6, 2), (3, 3), (1, 1), "same"),
        ("maxpool_2x3_valid_s2x1", tf.keras.layers.MaxPooling2D, (7, 7, 4), (2, 3), (2, 1),
         "valid"),
        # Wide enough for the kernel's 16-channel blocks plus a leftover tail.
        ("avgpool_3x3_same_s2_c20", tf.keras.layers.AveragePooling2D, (9, 9, 20), (3, 3), (2, 2),
         "same"),
        ("avgpool_4x4_valid_global_c35", tf.keras.layers.AveragePooling2D, (4, 4, 35), (4, 4),
         (1, 1), "valid"),
    ]
    for i, (name, cls, shape, pool, strides, padding) in enumerate(cases):
        model = _single_layer(1200 + i, shape,
                              lambda: cls(pool, strides=strides, padding=padding))
        opcode = "AVERAGE_POOL_2D" if "avg" in name else "MAX_POOL_2D"
        _emit(name, _convert(model, 1200 + i), [opcode])

    # A ReLU after pooling fuses into the pooling op. Calibrating on [-2, 8] puts real 0 and 6
    # well inside the int8 range, so both ends of the clamp bite.
    fused = [
        ("avgpool_3x3_same_s2_relu6", lambda x: tf.nn.relu6(tf.nn.avg_pool2d(x, 3, 2, "SAME")),
         "AVERAGE_POOL_2D"),
        ("avgpool_2x2_valid_s1_relu", lambda x: tf.nn.relu(tf.nn.avg_pool2d(x, 2, 1, "VALID")),
         "AVERAGE_POOL_2D"),
        ("maxpool_2x2_valid_s2_relu", lambda x: tf.nn.relu(tf.nn.max_pool2d(x, 2, 2, "VALID")),
         "MAX_POOL_2D"),
        ("maxpool_3x3_same_s1_relu6", lambda x: tf.nn.relu6(tf.nn.max_pool2d(x, 3, 1, "SAME")),
         "MAX_POOL_2D"),
    ]
    for i, (name, fn, opcode) in enumerate(fused):
        model = _single_layer(1250 + i, (8, 7, 3), lambda: _lambda(fn))
        _emit(name, _convert(model, 1250 + i, low=-2.0, high=8.0), [opcode])


def pad_models() -> None:
    import tensorflow as tf

    # ZeroPadding2D becomes PAD; the pad value is the output zero point.
    model = _single_layer(1300, (5, 6, 3),
                          lambda: tf.keras.layers.ZeroPadding2D(((1, 2), (0, 3))))
    _emit("pad_hw_1203", _convert(model, 1300), ["PAD"])
    # Padding every dimension but the batch, including channels; calibration away from zero so the
    # zero point is far from 0.
    model = _single_layer(1301, (4, 3, 2), lambda: _lambda(
        lambda x: tf.pad(x, [[0, 0], [2, 1], [1, 1], [1, 2]])))
    _emit("pad_hwc", _convert(model, 1301, low=0.0, high=2.0), ["PAD"])
    # PAD feeding a VALID convolution (the usual explicit-padding pattern). On an 8x8 input this
    # padding is not what SAME would do, so the converter cannot fold the PAD into the convolution
    # (on 7x7 it does).
    seed_everything(1302)
    inp = tf.keras.Input(shape=(8, 8, 3), batch_size=1)
    x = tf.keras.layers.ZeroPadding2D(1)(inp)
    x = tf.keras.layers.Conv2D(4, 3, strides=2, padding="valid", activation="relu")(x)
    model = tf.keras.Model(inp, x)
    randomize_biases(model, 1303)
    _emit("pad_then_conv", _convert(model, 1302), ["PAD", "CONV_2D"])
    # A non-zero constant becomes PADV2, its value quantized with the output's parameters.
    model = _single_layer(1304, (4, 5, 3), lambda: _lambda(
        lambda x: tf.pad(x, [[0, 0], [1, 1], [2, 0], [0, 0]], constant_values=0.5)))
    _emit("padv2_const0p5", _convert(model, 1304), ["PADV2"])


def mean_models() -> None:
    import tensorflow as tf

    cases = [
        # name, input (H, W, C), layer, calibration range
        ("mean_gap", (5, 5, 8), dict(), (-1.0, 1.0)),
        ("mean_gap_keepdims", (6, 4, 5), dict(keepdims=True), (-1.0, 1.0)),
        ("mean_gap_positive", (7, 7, 4), dict(), (0.0, 3.0)),
        ("mean_axis2_keepdims", (4, 6, 3), dict(axis=2, keepdims=True), (-1.0, 1.0)),
        ("mean_axis1", (5, 4, 3), dict(axis=1), (-1.0, 1.0)),
        ("mean_axis3", (4, 4, 6), dict(axis=3), (-2.0, 1.0)),
        ("mean_axes13_keepdims", (4, 5, 6), dict(axis=[1, 3], keepdims=True), (-1.0, 1.0)),
    ]

    def mean_layer(kwargs):
        # No axis: Keras' GlobalAveragePooling2D (the usual source of MEAN); else tf.reduce_mean.
        if "axis" not in kwargs:
            return tf.keras.layers.GlobalAveragePooling2D(**kwargs)
        return _lambda(lambda x: tf.reduce_mean(x, **kwargs))

    for i, (name, shape, kwargs, (low, high)) in enumerate(cases):
        model = _single_layer(1400 + i, shape, lambda: mean_layer(kwargs))
        _emit(name, _convert(model, 1400 + i, low=low, high=high), ["MEAN"])

    # The converter gives MEAN's output its own (narrower) scale. Patching the output to the input's
    # scale and zero point gives the case where TFLM's kernel could skip requantization.
    model = _single_layer(1450, (5, 5, 8), tf.keras.layers.GlobalAveragePooling2D)
    data = _same_quantization_as_input(_convert(model, 1450), op_index=0)
    _emit("mean_gap_same_scale", data, ["MEAN"])


def _same_quantization_as_input(data: bytes, op_index: int) -> bytes:
    """Overwrite the output tensor's scale and zero point of operator ``op_index`` with its first
    input's, in place in the flatbuffer (both are single-element vectors, so sizes do not change).
    Any later reader of the graph output (the model's output) sees the new parameters too."""
    from tensorflow.lite.python.schema_py_generated import Model

    buf = bytearray(data)
    graph = Model.GetRootAs(buf, 0).Subgraphs(0)
    op = graph.Operators(op_index)
    src = graph.Tensors(op.Inputs(0)).Quantization()
    dst = graph.Tensors(op.Outputs(0)).Quantization()
    # GetVectorAsNumpy views the underlying bytearray, so writing to it edits the model.
    dst.ScaleAsNumpy()[:] = src.ScaleAsNumpy()
    dst.ZeroPointAsNumpy()[:] = src.ZeroPointAsNumpy()
    return bytes(buf)


def concat_models() -> None:
    import tensorflow as tf

    # Two convolution branches joined on channels: the converter gives both branches the
    # concatenation's scale, so the op itself is a copy.
    seed_everything(1500)
    inp = tf.keras.Input(shape=(6, 6, 3), batch_size=1)
    a = tf.keras.layers.Conv2D(3, 3, padding="same")(inp)
    b = tf.keras.layers.Conv2D(2, 1, padding="same", activation="relu")(inp)
    model = tf.keras.Model(inp, tf.keras.layers.Concatenate(axis=-1)([a, b]))
    randomize_biases(model, 1501)
    _emit("concat_conv_branches_c", _convert(model, 1500),
          ["CONV_2D", "CONV_2D", "CONCATENATION"])

    # Three graph inputs on the height axis, and two on the width axis.
    for axis, name, count, seed in ((1, "concat_inputs3_h", 3, 1510),
                                    (2, "concat_inputs2_w", 2, 1511)):
        seed_everything(seed)
        inputs = [tf.keras.Input(shape=(2 + k, 3, 4) if axis == 1 else (3, 1 + k, 4),
                                 batch_size=1) for k in range(count)]
        model = tf.keras.Model(inputs, tf.keras.layers.Concatenate(axis=axis)(inputs))
        data = _convert(model, seed)
        _emit(name, data, ["CONCATENATION"])

    # Branches with very different ranges (a ReLU6 and a convolution scaled by 0.1). TF 2.21's
    # converter does not give CONCATENATION inputs their own scales: it makes both convolutions
    # produce the concatenation's scale directly (no extra requantize op), so TFLM's byte copy is
    # exact. The model checks that a wide-range branch and a narrow one share one scale correctly.
    seed_everything(1520)
    inp = tf.keras.Input(shape=(5, 5, 2), batch_size=1)
    a = tf.keras.layers.Conv2D(3, 3, padding="same", activation="relu6")(inp)
    b = _lambda(lambda t: t * 0.1)(tf.keras.layers.Conv2D(2, 3, padding="same")(inp))
    model = tf.keras.Model(inp, tf.keras.layers.Concatenate(axis=3)([a, b]))
    randomize_biases(model, 1521)
    _emit("concat_mixed_ranges", _convert(model, 1520, low=-2.0, high=2.0),
          ["CONV_2D", "CONV_2D", "CONCATENATION"])


def conv_depth4_models() -> None:
    """Convolutions whose input depth is a multiple of 4 (the variants widen window rows in place)
    with 27 and 4 groups of 4 taps: 27 % 8 = 3 enters dsp16's 8-group loop part way and runs whole
    passes after, 4 is a single part pass; 5 channels and 25 pixels leave odd ones out of the
    2 x 2 blocks. Made last, so the models above keep their bytes (Keras numbers its layers)."""
    import tensorflow as tf

    cases = [
        # name, input (H, W, C), filters, kernel, padding, activation
        ("conv_3x3_same_s1_c12_relu_pc", (6, 7, 12), 6, (3, 3), "same", "relu"),
        ("conv_1x1_c16_pc", (5, 5, 16), 5, (1, 1), "valid", None),
    ]
    for i, (name, shape, filters, kernel, padding, act) in enumerate(cases):
        model = _single_layer(1100 + i, shape, lambda: tf.keras.layers.Conv2D(
            filters, kernel, padding=padding, activation=act))
        _emit(name, _convert(model, 1100 + i), ["CONV_2D"])


def depthwise_clamp_models() -> None:
    """Depthwise convolutions whose fused ReLU6 clamps inside the int8 range at both ends: joined
    on channels with a wider branch (the second depthwise, scaled by 4), they produce the
    concatenation's scale, so real 0 and 6 land well inside it. Stride 1 and 2, 6 channels (a
    block of 4 and 2 left over). Made last, so the models above keep their bytes."""
    import tensorflow as tf

    for i, (name, strides) in enumerate((("dw_3x3_same_s1_relu6_clamped_c6_pc", 1),
                                         ("dw_3x3_same_s2_relu6_clamped_c6_pc", 2))):
        seed_everything(1160 + i)
        inp = tf.keras.Input(shape=(7, 8, 6), batch_size=1)
        a = tf.keras.layers.DepthwiseConv2D(3, strides=strides, padding="same",
                                            activation="relu6")(inp)
        b = _lambda(lambda t: t * 4.0)(
            tf.keras.layers.DepthwiseConv2D(3, strides=strides, padding="same")(inp))
        model = tf.keras.Model(inp, tf.keras.layers.Concatenate(axis=-1)([a, b]))
        randomize_biases(model, 1161 + i)
        _emit(name, _convert(model, 1160 + i, low=-2.0, high=2.0),
              ["DEPTHWISE_CONV_2D", "DEPTHWISE_CONV_2D", "CONCATENATION"])


def depthwise_one_channel_models() -> None:
    """Depthwise convolutions over a one-channel input with depth multiplier > 1, which the
    compiler turns into the equivalent CONV_2D (microbuild/compiler/single_channel_depthwise.py):
    TFLM micro_speech's first layer (10x8 filter, stride 2, multiplier 8), a per-tensor VALID one
    without bias clamped by ReLU6, and a dilated one with an odd channel count. Made last, so the
    models above keep their bytes."""
    import tensorflow as tf

    cases = [
        # name, input (H, W), kernel, strides, padding, multiplier, dilation, activation, bias,
        # per-channel
        ("dw_1ch_10x8_same_s2_m8_relu_pc", (25, 20), (10, 8), (2, 2), "same", 8, (1, 1), "relu",
         True, True),
        ("dw_1ch_3x3_valid_s1_m4_relu6_nobias_pt", (9, 7), (3, 3), (1, 1), "valid", 4, (1, 1),
         "relu6", False, False),
        ("dw_1ch_3x3_dil2_same_m3_pc", (8, 8), (3, 3), (1, 1), "same", 3, (2, 2), None, True, True),
    ]
    for i, (name, (h, w), kernel, strides, padding, mult, dilation, act, bias,
            per_channel) in enumerate(cases):
        model = _single_layer(1170 + i, (h, w, 1), lambda: tf.keras.layers.DepthwiseConv2D(
            kernel, strides=strides, padding=padding, depth_multiplier=mult,
            dilation_rate=dilation, activation=act, use_bias=bias))
        _emit(name, _convert(model, 1170 + i, per_channel=per_channel), ["DEPTHWISE_CONV_2D"])


def conv_dilated_models() -> None:
    """Dilated convolutions the fast variants take since they gather dilated taps into the
    column: a depth that is a multiple of 4 (the DSP variant widens taps in place), dilation
    along one axis only (a time-dilated audio layer) and a 1xK filter with dilation 3 along the
    width. Made last, so the models above keep their bytes."""
    import tensorflow as tf

    cases = [
        # name, input (H, W, C), filters, kernel, padding, dilation, activation
        ("conv_3x3_dil2_same_c8_relu_pc", (9, 8, 8), 6, (3, 3), "same", (2, 2), "relu"),
        ("conv_3x3_dil2x1_valid_c4_pc", (11, 6, 4), 5, (3, 3), "valid", (2, 1), None),
        ("conv_1x3_dil1x3_same_c3_pc", (4, 12, 3), 4, (1, 3), "same", (1, 3), "relu6"),
    ]
    for i, (name, shape, filters, kernel, padding, dilation, act) in enumerate(cases):
        model = _single_layer(1180 + i, shape, lambda: tf.keras.layers.Conv2D(
            filters, kernel, padding=padding, dilation_rate=dilation, activation=act))
        _emit(name, _convert(model, 1180 + i), ["CONV_2D"])


def depthwise_dilated_models() -> None:
    """Dilated depthwise convolutions (multiplier 1), which the portable and Helium variants
    take: dilation along the width only with VALID padding, and dilation 3 with SAME padding
    wider than the input's border, per-tensor, 5 channels (a block of 4 and one left over).
    Made last, so the models above keep their bytes."""
    import tensorflow as tf

    cases = [
        # name, input (H, W, C), kernel, padding, dilation, activation, per-channel
        ("dw_3x3_dil1x2_valid_c6_relu_pc", (7, 11, 6), (3, 3), "valid", (1, 2), "relu", True),
        ("dw_3x3_dil3_same_c5_pt", (8, 9, 5), (3, 3), "same", (3, 3), None, False),
    ]
    for i, (name, shape, kernel, padding, dilation, act, per_channel) in enumerate(cases):
        model = _single_layer(1190 + i, shape, lambda: tf.keras.layers.DepthwiseConv2D(
            kernel, padding=padding, dilation_rate=dilation, activation=act))
        _emit(name, _convert(model, 1190 + i, per_channel=per_channel), ["DEPTHWISE_CONV_2D"])


if __name__ == "__main__":
    conv_models()
    depthwise_models()
    pooling_models()
    pad_models()
    mean_models()
    concat_models()
    conv_depth4_models()
    depthwise_clamp_models()
    depthwise_one_channel_models()
    conv_dilated_models()
    depthwise_dilated_models()
