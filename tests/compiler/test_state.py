"""Models with state kept between invocations (TFLite variable tensors): SVDF's activation state
now, the recurrent operators' state next. The state lives in its own buffer (``<prefix>_STATE_SIZE``
bytes, cleared by ``<prefix>_reset``), not in the workspace; invoking a model N times on N inputs
must give TFLM's N outputs, TFLM's interpreter being invoked the same way."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from compiler_support import CFLAGS, assert_bit_exact, random_inputs, run_tflm_many

from microbuild.compiler import compile_model

OPS = Path(__file__).resolve().parent.parent / "models" / "ops"
SVDF = sorted(OPS.glob("svdf_*.tflite"))


def test_the_svdf_sweep_is_there():
    assert {p.stem for p in SVDF} == {"svdf_s16_rank1_bias", "svdf_s16_rank2_b2",
                                      "svdf_s8_rank1_bias", "svdf_s8_rank3_bias_b2"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SVDF, ids=lambda p: p.stem)
def test_svdf_streams_bit_exact_with_tflm(model, cc, tmp_path):
    # 8 consecutive invocations: the state the first ones leave is what the later ones read.
    assert_bit_exact(model, n=8, seed=4, cc=cc, tmp_path=tmp_path)


def test_state_is_its_own_buffer_with_a_reset():
    model = compile_model(OPS / "svdf_s16_rank1_bias.tflite", prefix="kws")
    header = model.sources["kws.h"]
    assert model.state_bytes == 1 * 8 * 6 * 2 == model.summary()["state_bytes"]
    assert f"#define KWS_STATE_SIZE {model.state_bytes}" in header
    assert "void kws_reset(void *state);" in header
    assert "void *workspace, void *state);" in header
    # The state is not in the workspace plan.
    state_tensor = model.summary()["state"][0]["tensor"]
    assert all(state_tensor not in b["tensors"] for b in model.summary()["plan"]["buffers"])
    # A stateless model keeps the plain signature.
    plain = compile_model(OPS / "fc_bias_none_pc.tflite", prefix="fc")
    assert plain.state_bytes == 0 and "STATE" not in plain.sources["fc.h"]
    assert "void *workspace);" in plain.sources["fc.h"]


def test_reset_fills_an_int8_state_with_its_zero_point():
    model = compile_model(OPS / "svdf_s8_rank1_bias.tflite", prefix="m")
    (entry,) = model.summary()["state"]
    assert entry["fill"] == (-9) & 0xFF  # the state tensor's zero point, as TFLM resets it
    assert f"memset(st + 0, {entry['fill']}, {entry['bytes']});" in model.sources["m.c"]


def test_reset_starts_the_stream_again(tmp_path):
    """Run 4 inputs, reset, run the same 4: the same outputs as TFLM's first 4 both times."""
    path = OPS / "svdf_s8_rank3_bias_b2.tflite"
    model = compile_model(path, prefix="net")
    model.write(tmp_path)
    sets = random_inputs(path, 4, seed=9)
    expected = run_tflm_many(path, sets)
    size = model.inputs[0].bytes
    out = model.outputs[0].bytes
    (tmp_path / "main.c").write_text(f"""
#include <stdio.h>
#include <stdlib.h>
#include "net.h"
int main(void)
{{
    static unsigned char ws[NET_WORKSPACE_SIZE], st[NET_STATE_SIZE];
    static signed char in[4][{size}], y[{out}];
    if (fread(in, 1, sizeof in, stdin) != sizeof in) return 2;
    for (int round = 0; round < 2; round++) {{
        net_reset(st);
        for (int i = 0; i < 4; i++) {{
            if (net_run(in[i], y, ws, st) != 0) return 3;
            fwrite(y, 1, sizeof y, stdout);
        }}
    }}
    return 0;
}}
""")
    sources = [tmp_path / n for n in model.sources if n.endswith(".c")] + \
        [model.runtime_dir / k for k in model.kernel_sources] + [tmp_path / "main.c"]
    binary = tmp_path / "stream"
    subprocess.run(["gcc", *CFLAGS, f"-I{tmp_path}", f"-I{model.runtime_dir / 'include'}",
                    *map(str, sources), "-o", str(binary)], check=True)
    result = subprocess.run([str(binary)], input=b"".join(s[0].tobytes() for s in sets),
                            capture_output=True, check=True)
    got = np.frombuffer(result.stdout, np.int8).reshape(2, 4, *model.outputs[0].shape)
    want = np.stack([e[0] for e in expected])
    assert np.array_equal(got[0], want) and np.array_equal(got[1], want)
    # The state really matters: the same input twice gives two different outputs.
    twice = run_tflm_many(path, [sets[0], sets[0]])
    assert not np.array_equal(twice[0][0], twice[1][0])
