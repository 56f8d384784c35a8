"""A depthwise convolution over a one-channel input (depth multiplier > 1) is compiled as the
equivalent CONV_2D, so the convolution's fast variants take it (microbuild/compiler/
single_channel_depthwise.py). Bit-exactness with TFLM (which runs the DEPTHWISE_CONV_2D) is in
test_ops_conv.py (gcc, clang), test_variants.py (every portable conv variant) and the QEMU sweeps
(the DSP and Helium ones); here: what is rewritten, what is not, and that the layer gets a fast
kernel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact

from microbuild.boards import load_board
from microbuild.compiler import compile_model
from microbuild.compiler.prepare import prepare_graph
from microbuild.compiler.variants import Selection, Target
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models"
ONE_CHANNEL = sorted((MODELS / "ops").glob("dw_1ch_*.tflite"))
MICRO_SPEECH = Path(__file__).resolve().parents[3] / "shared" / "models" / \
    "micro_speech_quantized.tflite"


def test_the_one_channel_sweep_is_there():
    assert [p.stem for p in ONE_CHANNEL] == ["dw_1ch_10x8_same_s2_m8_relu_pc",
                                             "dw_1ch_3x3_dil2_same_m3_pc",
                                             "dw_1ch_3x3_valid_s1_m4_relu6_nobias_pt"]


def test_one_channel_depthwise_becomes_conv_with_the_transposed_filter():
    source = read_model(MODELS / "ops" / "dw_1ch_10x8_same_s2_m8_relu_pc.tflite")
    dw = source.operators[0]
    graph = prepare_graph(source)
    (conv,) = graph.operators
    assert conv.opcode == "CONV_2D" and conv.model_index == dw.model_index
    assert conv.inputs[0] == dw.inputs[0] and conv.inputs[2:] == dw.inputs[2:]
    assert conv.outputs == dw.outputs
    assert conv.options == {k: v for k, v in dw.options.items() if k != "depth_multiplier"}
    old, new = source.tensor(dw.inputs[1]), graph.tensor(conv.inputs[1])
    assert old.shape == (1, 10, 8, 8) and new.shape == (8, 10, 8, 1)
    # Output channel m of the convolution is the depthwise filter's channel m.
    for m in range(8):
        np.testing.assert_array_equal(new.data[m, :, :, 0], old.data[0, :, :, m])
    assert new.quant.axis == 0 and np.array_equal(new.quant.scale, old.quant.scale)
    assert any("compiled as the equivalent CONV_2D" in note for note in graph.notes)
    # The file's graph is left as it was.
    assert source.operators[0].opcode == "DEPTHWISE_CONV_2D"


def test_depthwise_over_several_channels_stays_depthwise():
    graph = prepare_graph(read_model(MODELS / "ops" / "dw_3x3_same_s2_m3_pc.tflite"))
    assert [op.opcode for op in graph.operators] == ["DEPTHWISE_CONV_2D"]
    assert not any("equivalent CONV_2D" in note for note in graph.notes)


needs_micro_speech = pytest.mark.skipif(
    not MICRO_SPEECH.is_file(), reason=f"{MICRO_SPEECH} is not here: the real models folder "
    "../shared/models exists in microbuild's CI, not in every clone")


@needs_micro_speech
def test_the_layer_gets_the_fast_convolution_kernel_on_each_core():
    for board, variant in (("mps2-an500", "dsp"), ("mps3-an547", "mve"), ("mps2-an385", "gemm")):
        selection = Selection(target=Target.of_board(load_board(board)))
        compiled = compile_model(MICRO_SPEECH, selection=selection)
        ops = compiled.summary()["ops"]
        assert ops[1]["opcode"] == "CONV_2D" and ops[1]["kernel"] == variant, (board, ops[1])


@needs_micro_speech
def test_micro_speech_bit_exact_with_tflm_on_the_host():
    # TFLM runs the DEPTHWISE_CONV_2D; the generated C runs the CONV_2D it became.
    assert_bit_exact(MICRO_SPEECH, n=4, seed=11)
