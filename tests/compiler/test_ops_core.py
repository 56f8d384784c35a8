"""FULLY_CONNECTED, RESHAPE and SOFTMAX: generated C bit-exact with TFLM, plus code-shape checks.

Models come from tests/models/generate/ops_core.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, random_inputs, run_on_host, run_tflm

from microbuild.compiler import compile_model
from microbuild.compiler.ops.softmax import softmax_params
from microbuild.compiler.plan_check import verify_plan

OPS_DIR = Path(__file__).resolve().parent.parent / "models" / "ops"
MODELS = sorted(p for pattern in ("fc_*.tflite", "softmax_*.tflite", "reshape_*.tflite")
                for p in OPS_DIR.glob(pattern))


def test_the_sweep_is_there():
    names = {p.stem for p in MODELS}
    # per-channel and per-tensor weights, with and without bias, several activations, keep_num_dims
    assert {"fc_bias_none_pc", "fc_bias_none_pt", "fc_nobias_none_pc", "fc_nobias_relu_pt",
            "fc_bias_relu6_pt", "fc_keepdims_pc", "fc_zero_bias_pc"} <= names
    assert {"softmax_1x10_beta0p5", "softmax_1x10_beta2", "softmax_5x12"} <= names
    assert {"reshape_only", "fc_reshape_chain", "fc_two_outputs"} <= names


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=12, seed=7, cc=cc, tmp_path=tmp_path)


def test_softmax_outputs_are_not_degenerate(tmp_path):
    """Guard against a test that passes because everything saturates."""
    model = OPS_DIR / "softmax_1x10.tflite"
    sets = random_inputs(model, 8, seed=1)
    outputs = [o[0] for o in run_on_host(model, sets, workdir=tmp_path)]
    values = np.concatenate([o.ravel() for o in outputs])
    assert len(np.unique(values)) > 20
    assert np.array_equal(outputs[0], run_tflm(model, sets[0])[0])


def test_softmax_params_follow_tflm_preparation():
    # beta * scale * 2^26 = 2^20 (exactly representable): multiplier 2^30 with shift 21,
    # radius floor(31 * 2^26 / 2^21) = 992.
    multiplier, shift, diff_min = softmax_params(2.0 ** -6, 1.0)
    assert (multiplier, shift, diff_min) == (1 << 30, 21, -992)
    # A huge beta is capped at 2^31 - 1, so only the row maximum survives.
    multiplier, shift, diff_min = softmax_params(1.0, 1e6)
    assert (multiplier, shift, diff_min) == (2147483647, 31, 0)


def test_fc_per_channel_and_per_tensor_parameters():
    per_channel = compile_model(OPS_DIR / "fc_bias_none_pc.tflite", prefix="pc")
    per_tensor = compile_model(OPS_DIR / "fc_bias_none_pt.tflite", prefix="pt")
    assert "pc_op0_multipliers" in per_channel.sources["pc_weights.c"]
    assert "pt_op0_multipliers" not in per_tensor.sources["pt_weights.c"]
    assert "NULL, NULL" in per_tensor.sources["pt.c"]


def test_reshape_aliases_and_io_share_the_workspace():
    chain = compile_model(OPS_DIR / "fc_reshape_chain.tflite")
    assert len(chain.plan.aliases) == 2
    run_body = chain.sources["model.c"].split("{", 1)[1]
    assert "memcpy" not in run_body
    # A RESHAPE alone is one buffer: the input is copied into its slot and out of it again.
    alone = compile_model(OPS_DIR / "reshape_only.tflite")
    assert alone.workspace_bytes == 32
    assert "memmove((ws + 0), in0, 32);" in alone.sources["model.c"]
    assert "memmove(out0, (ws + 0), 32);" in alone.sources["model.c"]
    assert "#define MODEL_INPUT0_OFFSET 0" in alone.sources["model.h"]


def test_output_also_consumed_later_lives_to_the_end_of_the_run():
    model = compile_model(OPS_DIR / "fc_two_outputs.tflite")
    hidden = model.graph.outputs[1]
    buffer = next(b for b in model.plan.buffers if hidden in b.tensors)
    assert buffer.last_op == len(model.graph.operators) - 1
    assert verify_plan(model.graph, model.plan) == []


def test_graph_input_returned_as_output_is_copied(tmp_path):
    from microbuild.model.reader import read_model

    graph = read_model(OPS_DIR / "fc_bias_none_pc.tflite")
    graph.outputs.append(graph.inputs[0])  # also return the input unchanged
    model = compile_model(graph, prefix="echo")
    slot = model.plan.locations[graph.inputs[0]].offset
    assert f"memmove((ws + {slot}), in0, 16);" in model.sources["echo.c"]
    assert f"memmove(out1, (ws + {slot}), 16);" in model.sources["echo.c"]
    assert verify_plan(model.graph, model.plan) == []
    model.write(tmp_path)
    _compile(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c"], model, tmp_path)


CROSS = [
    ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb"],
    ["riscv64-unknown-elf-gcc", "--specs=picolibc.specs", "-march=rv32imac", "-mabi=ilp32"],
]


@pytest.mark.parametrize("target", CROSS, ids=lambda c: c[0])
def test_generated_c_and_kernels_cross_compile(target, tmp_path):
    model = compile_model(OPS_DIR / "fc_reshape_chain.tflite", prefix="chain")
    # The reference kernels (FULLY_CONNECTED's int8 and 16x8 files, SOFTMAX's with the 16x8
    # tables), and the portable variants a generic CPU gets by default (SOFTMAX fast needs
    # softmax.c's reciprocal).
    assert set(model.kernel_sources) == {"kernels/fully_connected.c", "kernels/softmax.c",
                                         "kernels/softmax_fast.c",
                                         "kernels/fully_connected_band.c",
                                         "kernels/softmax16_tables.c",
                                         "kernels/fully_connected_s16.c",
                                         "kernels/fully_connected_portable.c"}
    model.write(tmp_path)
    _compile(target + ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-c"], model, tmp_path)


def _compile(command: list[str], model, out_dir: Path) -> None:
    sources = [out_dir / n for n in model.sources if n.endswith(".c")]
    sources += [model.runtime_dir / k for k in model.kernel_sources]
    for source in sources:
        result = subprocess.run(
            command + [f"-I{out_dir}", f"-I{model.runtime_dir / 'include'}", str(source), "-o",
                       str(out_dir / (source.stem + ".o"))],
            capture_output=True, text=True)
        assert result.returncode == 0, f"{' '.join(command)} {source}:\n{result.stderr}"
