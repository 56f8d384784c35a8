"""The real models of ../shared/models that compile (see tests/compiler/test_shared_models.py),
on the emulated Cortex-M7 (mps2-an500) with the board's default kernels, bit-exact with TFLM.
MobileNetV2 (3.4 MB of weights) gets a firmware of its own; the small ones share one. The last
test runs a keyword spotter's whole pipeline (audio front end + micro_speech) in one firmware."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import differences_on_device, run_tflm_many  # noqa: E402
from test_shared_models import audio_stream, shared_model  # noqa: E402

BOARD = "mps2-an500"
FIRMWARES = {
    "small": ["hello_world_int8", "simple_add_model", "micro_speech_quantized", "person_detect"],
    "mobilenet_v2": ["mobilenet_v2_quantized_1x3x224x224"],
    "stateful": ["keyword_scrambled", "keyword_scrambled_8bit", "audio_preprocessor_int8"],
    "lstm": ["trained_lstm_int8", "micro_speech_lstm", "dtln_noise_suppression"],
}
# Consecutive invocations per model: the stateful ones stream (their state carries over).
INVOCATIONS = {"stateful": 6, "lstm": 6}


@pytest.mark.parametrize("firmware", FIRMWARES)
def test_real_models_are_bit_exact_on_the_cortex_m7(firmware, tmp_path):
    models = {f"m{k}": shared_model(name) for k, name in enumerate(FIRMWARES[firmware])}
    build = api.build_firmware(BOARD, {p: str(m) for p, m in models.items()}, tmp_path / "fw",
                               executor="rpc")
    problems = []
    with api.connect(BOARD, build, timeout=120) as dev:
        for prefix, model in models.items():
            problems += differences_on_device(dev, prefix, model,
                                              INVOCATIONS.get(firmware, 2), seed=21)
    assert not problems, "\n".join(problems)


def _frames_of(samples: np.ndarray, count: int) -> list[list[np.ndarray]]:
    """micro_speech's framing: 30 ms windows (480 samples at 16 kHz) every 20 ms (320)."""
    return [[samples[320 * k:320 * k + 480].reshape(1, 480)] for k in range(count)]


def test_audio_front_end_and_keyword_spotter_in_one_firmware(tmp_path):
    """A keyword spotter's whole pipeline on the emulated Cortex-M7: 1 s of audio -> 49 frames
    through audio_preprocessor_int8 (TFLM signal-library operators; its noise estimate carries
    over from frame to frame) -> 49 x 40 int8 features -> micro_speech_quantized -> 4 scores,
    equal to TFLM running both models the same way. Also the front end alone on frames of every
    loudness (quiet ones make its FFT auto-scaling shift)."""
    front, kws = shared_model("audio_preprocessor_int8"), shared_model("micro_speech_quantized")
    build = api.build_firmware(BOARD, {"front": str(front), "kws": str(kws)}, tmp_path / "fw",
                               executor="rpc")
    rng = np.random.default_rng(31)
    t = np.arange(16000 + 160)
    # A "word": a gliding tone with an envelope, in background noise.
    envelope = np.exp(-((t - 8000) / 2500.0) ** 2)
    audio = 9000 * envelope * np.sin(2 * np.pi * (300 + 0.05 * t) * t / 16000)
    audio = np.clip(np.round(audio + rng.normal(0, 60, t.size)), -32768, 32767).astype(np.int16)
    frames = _frames_of(audio, 49)
    loudness = audio_stream(16, seed=13)

    want_features = run_tflm_many(front, frames)
    features = np.concatenate([np.asarray(f[0]).reshape(-1) for f in want_features])
    want_scores = run_tflm_many(kws, [[features.reshape(1, 1960)]])[0][0]
    want_loudness = run_tflm_many(front, loudness)  # a fresh interpreter: a new stream

    with api.connect(BOARD, build, timeout=120) as dev:
        got_features = [dev.run("front", x)[0] for x in frames]
        got_scores = dev.run("kws", [np.concatenate(
            [f.reshape(-1) for f in got_features]).reshape(1, 1960)])[0]
        dev.reset("front")  # a new stream, as a fresh TFLM interpreter
        got_loudness = [dev.run("front", x)[0] for x in loudness]

    for k, (want, got) in enumerate(zip(want_features, got_features)):
        assert np.array_equal(np.asarray(want[0]).reshape(-1), got.reshape(-1)), \
            f"frame {k}: features differ from TFLM"
    assert np.array_equal(np.asarray(want_scores).reshape(-1), got_scores.reshape(-1)), \
        (want_scores, got_scores)
    for k, (want, got) in enumerate(zip(want_loudness, got_loudness)):
        assert np.array_equal(np.asarray(want[0]).reshape(-1), got.reshape(-1)), \
            f"loudness frame {k}: features differ from TFLM"
