"""The real models in ../shared/models (TFLM's own examples, converted by their authors) that part
1 of the real-world-models work covers: compiled and bit-exact with TFLM on the host, gcc and
clang. Their run on the emulated Cortex-M7 is tests/firmware/test_shared_models_qemu.py; the
whole folder's coverage table is benchmarks/real_models.py.

The folder is there in microbuild's CI; in a user's clone it is not, and these tests say so when
they skip (the generated test models in tests/models cover every operator on their own)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, run_on_host, run_tflm_many

from microbuild.compiler import compile_model

SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"
# Every model here compiles and is bit-exact.
COMPILED = ["hello_world_int8", "simple_add_model", "micro_speech_quantized", "person_detect",
            "mobilenet_v2_quantized_1x3x224x224"]
# Models with state kept between invocations: compared over several consecutive invocations,
# TFLM's interpreter invoked the same way (the audio front end's state is its noise estimate).
STATEFUL = ["keyword_scrambled", "keyword_scrambled_8bit", "trained_lstm_int8", "micro_speech_lstm",
            "dtln_noise_suppression", "audio_preprocessor_int8"]


def shared_model(name: str) -> Path:
    path = SHARED / f"{name}.tflite"
    if not path.is_file():
        pytest.skip(f"{path} is not here: the real models folder ../shared/models exists in "
                    "microbuild's CI, not in every clone")
    return path


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("name", COMPILED)
def test_real_model_is_bit_exact_with_tflm_on_the_host(name, cc, tmp_path):
    n = 2 if name.startswith("mobilenet_v2") else 6
    assert_bit_exact(shared_model(name), n=n, seed=3, cc=cc, tmp_path=tmp_path)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("name", STATEFUL)
def test_stateful_real_model_streams_bit_exact_with_tflm(name, cc, tmp_path):
    assert_bit_exact(shared_model(name), n=8, seed=5, cc=cc, tmp_path=tmp_path)


def test_open_batch_models_say_the_batch_was_fixed():
    for name in ("hello_world_int8", "simple_add_model"):
        notes = compile_model(shared_model(name)).summary()["notes"]
        assert any(n.startswith("batch fixed to 1") for n in notes), (name, notes)


def test_pytorch_mobilenet_v2_runs_one_transpose_at_its_nchw_input():
    compiled = compile_model(shared_model("mobilenet_v2_quantized_1x3x224x224"))
    opcodes = [op["opcode"] for op in compiled.summary()["ops"]]
    assert opcodes.count("TRANSPOSE") == 1 and opcodes[0] == "TRANSPOSE"
    assert compiled.inputs[0].shape == (1, 3, 224, 224)


def audio_stream(n: int, seed: int) -> list[list[np.ndarray]]:
    """``n`` consecutive 30 ms frames (480 samples at 16 kHz) of a signal that changes level:
    silence, quiet noise, tones from whisper to full scale, a clipped burst; what the audio front
    end meets, unlike full-range random samples (which keep its auto-scaling shift at 0)."""
    rng = np.random.default_rng(seed)
    t = np.arange(480)
    frames = []
    for k in range(n):
        amplitude = [0, 2, 30, 300, 3000, 12000, 32767, 120][k % 8]
        x = amplitude * np.sin(2 * np.pi * rng.uniform(60, 7000) * t / 16000 + rng.uniform(0, 6))
        x = x + rng.normal(0, amplitude / 10 + 0.4, 480)
        frames.append([np.clip(np.round(x), -32768, 32767).astype(np.int16).reshape(1, 480)])
    return frames


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_audio_preprocessor_streams_audio_bit_exact_with_tflm(cc, tmp_path):
    """micro_speech's audio front end (TFLM signal-library custom operators, int32 arithmetic,
    a noise estimate kept between frames) on 24 consecutive frames of varying loudness."""
    model = shared_model("audio_preprocessor_int8")
    frames = audio_stream(24, seed=8)
    want = run_tflm_many(model, frames)
    got = run_on_host(model, frames, cc=cc, workdir=tmp_path)
    bad = [i for i, (w, g) in enumerate(zip(want, got))
           if not np.array_equal(np.asarray(w[0]).reshape(-1), g[0].reshape(-1))]
    assert not bad, f"frames {bad} differ from TFLM"
    assert len({g[0].tobytes() for g in got}) > 12  # the features do follow the audio
