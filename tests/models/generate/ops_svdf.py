"""Single-operator SVDF models (int8 input/output, int16 or int8 state and time weights), built
with tflite_builder: the TFLite converter only emits SVDF from TensorFlow's own SVDF graphs (the
keyword-spotting models in ../shared/models were made that way), not from Keras layers.

    python tests/models/generate/ops_svdf.py      (needs numpy and the tflite-micro wheel)

Quantization follows what the converter gives those models: per-tensor everywhere, symmetric
weights, bias scale = state scale x time-weight scale (TFLM checks it), the state quantized
symmetric for int16 and with a zero point for int8. Each model's state is a variable tensor, so
invoking a model several times streams: the tests compare N consecutive invocations with TFLM's.
"""

from __future__ import annotations

import numpy as np
from common import save
from tflite_builder import ModelBuilder


def svdf_model(name: str, *, seed: int, batches: int, input_size: int, units: int, rank: int,
               memory: int, state_type: str, bias: bool, input_zp: int, state_zp: int,
               output_zp: int) -> None:
    rng = np.random.default_rng(seed)
    filters = units * rank
    in_scale, feat_scale, state_scale = 0.02, 0.004, 0.01 if state_type == "int8" else 0.0005
    time_scale, out_scale = 0.003 if state_type == "int8" else 0.00002, 0.03
    b = ModelBuilder()
    x = b.tensor("input", (batches, input_size), "int8", in_scale, input_zp)
    wf = b.constant("weights_feature", rng.integers(-127, 128, (filters, input_size),
                                                    dtype=np.int8), scale=feat_scale)
    info = np.iinfo(state_type)
    wt = b.constant("weights_time", rng.integers(info.min // 2, info.max // 2, (filters, memory),
                                                 dtype=state_type), scale=time_scale)
    inputs = [x, wf, wt]
    if bias:
        inputs.append(b.constant("bias", rng.integers(-20000, 20000, (units,), dtype=np.int32),
                                 scale=state_scale * time_scale))
    else:
        inputs.append(-1)
    state = b.tensor("activation_state", (batches, filters * memory), state_type, state_scale,
                     state_zp, variable=True)
    inputs.append(state)
    y = b.tensor("output", (batches, units), "int8", out_scale, output_zp)
    b.operator("SVDF", inputs, [y], "SVDFOptions", rank=rank, fusedActivationFunction=1)
    save(f"ops/{name}.tflite", b.build(inputs=[x], outputs=[y]))


if __name__ == "__main__":
    svdf_model("svdf_s16_rank1_bias", seed=1700, batches=1, input_size=24, units=8, rank=1,
               memory=6, state_type="int16", bias=True, input_zp=-3, state_zp=0, output_zp=5)
    # No model without a bias: TFLM's Prepare reads the bias's scale unconditionally and crashes
    # (microbuild refuses such a model instead).
    svdf_model("svdf_s16_rank2_b2", seed=1701, batches=2, input_size=16, units=6, rank=2,
               memory=4, state_type="int16", bias=True, input_zp=7, state_zp=0, output_zp=-11)
    svdf_model("svdf_s8_rank1_bias", seed=1702, batches=1, input_size=20, units=10, rank=1,
               memory=8, state_type="int8", bias=True, input_zp=0, state_zp=-9, output_zp=3)
    svdf_model("svdf_s8_rank3_bias_b2", seed=1703, batches=2, input_size=12, units=4, rank=3,
               memory=5, state_type="int8", bias=True, input_zp=12, state_zp=4, output_zp=-20)
