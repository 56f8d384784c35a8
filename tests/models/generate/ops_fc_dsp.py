"""FULLY_CONNECTED models for the paths of the dsp / dsp_wide kernels' fast path
(runtime/kernels/fully_connected_dsp.c) the other fc_* sweep models do not reach.

Run with a Python that has tensorflow-cpu:  /work/tfenv/bin/python tests/models/generate/ops_fc_dsp.py
Writes tests/models/ops/fc_dsp_*.tflite. Every model is seeded, so reruns give byte-identical files.

- fc_dsp_mixed_chunks_pc: depth 44 = 11 chunks of 4 (3 single chunks, then one pass of the
  8-chunk loop), 10 units (2 groups of 4 rows and 2 rows left over), 2 input rows (converter).
- fc_dsp_one_oct_pt: depth 36 (1 single chunk + one 8-chunk pass), exactly 4 units (converter).
- fc_dsp_relu6_clamp_pt, fc_dsp_relu_clamp_pc: an activation range narrower than int8, so the
  packed outputs are clamped byte-wise (SSUB8 + SEL); the converter always calibrates a fused
  RELU's output to start at -128, so these are built by hand (ModelBuilder).
- fc_dsp_round_ties_pt: weights in {-1, 0, 1} and a multiplier of 0.3 (a right shift of 1), so
  the sums stay mostly inside the output range and a quarter of them are rounding ties of the
  right shift on a negative value (random inputs reach the "- (hi < 0)" of the requantization
  only this way) (ModelBuilder).
- fc_dsp_left_shift_pt: a requantization multiplier above 1 (a left shift), which the short
  requantization table does not cover: the kernels take their generic path (ModelBuilder).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import quantize_int8, save, seed_everything  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402

RELU, RELU6 = 1, 3  # tflite ActivationFunctionType


def _dense(seed: int, shape, units: int, activation: str | None, per_channel: bool) -> bytes:
    import tensorflow as tf

    seed_everything(seed)
    inp = tf.keras.Input(shape=shape, batch_size=1)
    layer = tf.keras.layers.Dense(units, activation=activation)
    model = tf.keras.Model(inp, layer(inp))
    kernel, bias = layer.get_weights()
    rng = np.random.default_rng(seed + 1)
    layer.set_weights([kernel, rng.uniform(-0.5, 0.5, bias.shape).astype(np.float32)])
    options = None if per_channel else {
        "_experimental_disable_per_channel_quantization_for_dense_layers": True}
    return quantize_int8(model, seed, converter_options=options)


def _by_hand(seed: int, depth: int, units: int, activation: int, per_channel: bool,
             out_scale: float, out_zero_point: int, weight_max: int = 127, bias_max: int = 3000) -> bytes:
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.tensor("x", (1, depth), "int8", scale=0.02, zero_point=-5)
    w_scale = (rng.uniform(0.002, 0.006, units) if per_channel else 0.004)
    w = b.constant("w", rng.integers(-weight_max, weight_max + 1, (units, depth)).astype(np.int8),
                   scale=w_scale, zero_point=0)
    bias_scale = 0.02 * np.atleast_1d(w_scale)
    bias = b.constant("bias", rng.integers(-bias_max, bias_max, units).astype(np.int32),
                      scale=bias_scale if per_channel else float(bias_scale[0]), zero_point=0)
    y = b.tensor("y", (1, units), "int8", scale=out_scale, zero_point=out_zero_point)
    b.operator("FULLY_CONNECTED", [x, w, bias], [y], "FullyConnectedOptions",
               fusedActivationFunction=activation)
    return b.build(inputs=[x], outputs=[y])


def main() -> None:
    save("ops/fc_dsp_mixed_chunks_pc.tflite", _dense(400, (2, 44), 10, "relu", True))
    save("ops/fc_dsp_one_oct_pt.tflite", _dense(401, (36,), 4, None, False))
    # RELU6 with the output bytes -110 at 0.0 and 10 at 6.0: both ends of the range clamp.
    save("ops/fc_dsp_relu6_clamp_pt.tflite",
         _by_hand(402, 24, 8, RELU6, False, out_scale=0.05, out_zero_point=-110))
    # RELU with a zero point of -20: the bytes below -20 are clamped.
    save("ops/fc_dsp_relu_clamp_pc.tflite",
         _by_hand(403, 40, 6, RELU, True, out_scale=0.05, out_zero_point=-20))
    # input scale 0.02 * weight scale 0.004 / output scale 0.000266... = 0.3 = 0.6 * 2^-1.
    save("ops/fc_dsp_round_ties_pt.tflite",
         _by_hand(405, 16, 8, 0, False, out_scale=0.02 * 0.004 / 0.3, out_zero_point=0,
                  weight_max=1, bias_max=100))
    # input scale 0.02 * weight scale 0.004 / output scale 0.00005 = 1.6: a left shift of 1.
    save("ops/fc_dsp_left_shift_pt.tflite",
         _by_hand(404, 16, 6, 0, False, out_scale=0.00005, out_zero_point=3))


if __name__ == "__main__":
    main()
