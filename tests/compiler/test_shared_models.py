"""The real models in ../shared/models (TFLM's own examples, converted by their authors) that part
1 of the real-world-models work covers: compiled and bit-exact with TFLM on the host, gcc and
clang. Their run on the emulated Cortex-M7 is tests/firmware/test_shared_models_qemu.py; the
whole folder's coverage table is benchmarks/real_models.py.

The folder is there in microbuild's CI; in a user's clone it is not, and these tests say so when
they skip (the generated test models in tests/models cover every operator on their own)."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_support import assert_bit_exact

from microbuild.compiler import compile_model

SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"
# Every model here compiles and is bit-exact.
COMPILED = ["hello_world_int8", "simple_add_model", "micro_speech_quantized", "person_detect",
            "mobilenet_v2_quantized_1x3x224x224"]
# Models with state kept between invocations: compared over several consecutive invocations,
# TFLM's interpreter invoked the same way.
STATEFUL = ["keyword_scrambled", "keyword_scrambled_8bit", "trained_lstm_int8", "micro_speech_lstm",
            "dtln_noise_suppression"]


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
