"""float32 models, bit-exact with TFLM on the host: TFLM's own float examples from ../shared/models
(an FC net, the audio front end with float CAST/MUL after the signal ops, a float LSTM that keeps
its state between invocations) and the project's own float test model. Outputs are compared as
bytes, so -0.0 against 0.0 or one NaN against another would count as a difference.

On x86-64 TFLM's float kernels multiply and add without fusing (no FMA in the baseline ISA), and
so do ours there (runtime/include/microbuild/kernels/f32.h); the Arm boards are
tests/firmware/test_float_models_qemu.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from compiler_support import build_on_host, random_inputs, run_on_host, run_tflm_many
from test_shared_models import audio_stream, shared_model

OPS_DIR = Path(__file__).resolve().parent.parent / "models" / "ops"


def assert_same_bytes(model_path, input_sets, cc, tmp_path) -> list[list[np.ndarray]]:
    """Run every input set through TFLM (one interpreter) and the generated C (one process, state
    carried over) and fail naming each output whose bytes differ."""
    want = run_tflm_many(model_path, input_sets)
    got = run_on_host(model_path, input_sets, cc=cc, workdir=tmp_path)
    bad = []
    for i, (w_set, g_set) in enumerate(zip(want, got)):
        for k, (w, g) in enumerate(zip(w_set, g_set)):
            w = np.ascontiguousarray(np.asarray(w).reshape(g.shape))
            if w.dtype != g.dtype or w.tobytes() != g.tobytes():
                diff = np.abs(w.astype(np.float64) - g.astype(np.float64))
                bad.append(f"invocation {i} output {k}: {int(np.count_nonzero(w != g))} of "
                           f"{g.size} differ, max abs diff {diff.max():g}")
    assert not bad, f"{Path(model_path).name} ({cc}) differs from TFLM:\n" + "\n".join(bad[:8])
    return got


@pytest.mark.parametrize("name,cc", [("hello_world_float", "gcc"), ("trained_lstm", "gcc"),
                                     ("trained_lstm", "clang")])
def test_tflm_float_example_is_bit_exact_over_invocations(name, cc, tmp_path):
    # trained_lstm keeps its hidden and cell states: 6 invocations of one interpreter.
    model = shared_model(name)
    got = assert_same_bytes(model, random_inputs(model, 6, seed=11), cc, tmp_path)
    assert len({g[0].tobytes() for g in got}) == 6  # the outputs do follow the inputs


def test_float_lstm_output_lies_over_its_input():
    # lstm_f32.c has read a step's input row when it writes that step's output row, so the
    # planner overlaps them (the bit-exact runs above use this plan): trained_lstm's 28 x 28
    # input and 28 x 20 output share all but one 80-byte output row.
    from microbuild.compiler import compile_model

    compiled = compile_model(shared_model("trained_lstm"))
    x_bytes, out_bytes, scratch = 28 * 28 * 4, 28 * 20 * 4, 4 * 20 * 4
    assert compiled.workspace_bytes <= x_bytes + 80 + scratch < x_bytes + out_bytes


def test_float_audio_preprocessor_streams_bit_exact(tmp_path):
    cc = "clang"
    model = shared_model("audio_preprocessor_float")
    got = assert_same_bytes(model, audio_stream(16, seed=9), cc, tmp_path)
    assert got[0][0].dtype == np.float32 and len({g[0].tobytes() for g in got}) > 8


def test_float_dense_model_is_bit_exact(tmp_path):
    model = OPS_DIR / "float_dense.tflite"
    assert_same_bytes(model, random_inputs(model, 8, seed=2), "gcc", tmp_path)


def test_float_model_header_types_its_tensors_float(tmp_path):
    binary, compiled = build_on_host(shared_model("trained_lstm"), "gcc", tmp_path)
    header = (binary.parent / "net.h").read_text()
    assert "#define NET_INPUT0_TYPE float" in header
    assert "#define NET_OUTPUT0_TYPE float" in header
    assert '#define NET_INPUT0_DTYPE "float32"' in header
    # 28 x 28 float inputs: 4-byte elements in the plan.
    assert compiled.inputs[0].bytes == 28 * 28 * 4
    # The LSTM's two states (20 floats each) live in the state buffer.
    assert compiled.state_bytes >= 2 * 20 * 4



def test_run_command_takes_a_float_input_file_and_gives_tflms_floats(tmp_path, capsys):
    """`microbuild run --input x.npy` on the host board with a float model: the outputs are TFLM's
    floats; a float64 file is refused in one line that does not talk about quantizing."""
    import json

    from microbuild import cli

    model = shared_model("hello_world_float")
    x = np.array([[1.25]], np.float32)
    np.save(tmp_path / "x.npy", x)
    status = cli.main(["run", "--board", "host", "--model", str(model), "--executor", "aot",
                       "--input", str(tmp_path / "x.npy"), "--json", "-o", str(tmp_path / "fw")])
    document = json.loads(capsys.readouterr().out)
    assert status == 0
    (output,) = document["run"]["models"][model.stem]["outputs"]
    want = run_tflm_many(model, [[x]])[0][0]
    assert np.array_equal(np.array(output["values"], np.float32), want.reshape(-1))
    np.save(tmp_path / "wide.npy", x.astype(np.float64))
    assert cli.main(["run", "--board", "host", "--model", str(model), "--executor", "aot",
                     "--input", str(tmp_path / "wide.npy"), "-o", str(tmp_path / "fw")]) != 0
    err = capsys.readouterr().err
    assert "dtype is float64, but input" in err and "float32" in err
    assert "quantize" not in err and "Traceback" not in err
