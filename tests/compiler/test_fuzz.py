"""Damaged and hostile model files: the inputs that once broke microbuild (../shared/regressions,
when present) and a seeded mutation fuzzer over the small test models, the small real models in
../shared/models and those regression files find no traceback and no hang, and the C of the
mutants that compile builds with -Werror and runs clean under ASan/UBSan. A bounded run (about a
minute); the long one over every model is benchmarks/fuzz_models.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from compiler_support import build_on_host
from model_fuzz import fuzz, mutate

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "models"
REGRESSIONS = ROOT.parent / "shared" / "regressions"
REGRESSION_FILES = sorted(REGRESSIONS.glob("*.tflite"))
# Small models only: a mutant of a 300 KB model takes seconds to compile, and the reader and the
# compiler meet the same structures in the small ones (the benchmark mutates them all).
# The float32 ones are among them (hello_world_float, audio_preprocessor_float, trained_lstm,
# keras_kws_float_io); the stock converter's uint8-boundary model is added by name.
MODELS = sorted(p for p in [*(ROOT / "tests" / "models").glob("*.tflite"), *SHARED.glob("*.tflite"),
                            ROOT / "tests" / "models" / "boundaries" / "keras_camera_uint8.tflite"]
                if p.stat().st_size < 50_000) + REGRESSION_FILES
MUTANTS = 16


@pytest.mark.parametrize("path", REGRESSION_FILES or [None],
                         ids=lambda p: p.name if p is not None else "absent")
def test_regression_files_are_refused_clearly_or_compile(path):
    if path is None:
        pytest.skip(f"{REGRESSIONS} is absent (or has no .tflite): no regression inputs to run")
    try:
        compile_model(path, prefix="regression")
    except ModelError as exc:
        message = str(exc)
        assert message.startswith(str(path)), message
        if path.name.startswith("planner_keyerror"):
            # Activations flagged as variables: refused before planning, naming tensor and op.
            assert "the model's graph is malformed" in message
            assert re.search(r"op \d+ [A-Z_0-9]+ writes tensor \d+ '", message), message


def test_fuzzed_models_give_clear_errors_or_clean_c(tmp_path):
    result = fuzz(MODELS, mutants_per_model=MUTANTS, seed=2026, check_c=3, workdir=tmp_path)
    assert result.mutants == MUTANTS * len(MODELS)
    shown = "\n\n".join(f"{f.model} mutant {f.mutant}: {f.kind}\n{f.detail}"
                        for f in result.findings[:3])
    assert not result.findings, f"{len(result.findings)} findings, e.g.:\n{shown}"
    # The run exercised both sides: mutants the reader refuses and mutants that compile.
    assert result.refused > result.mutants // 10
    assert result.compiled > 0 and result.c_checked == 3


def test_mutation_is_deterministic():
    data = (ROOT / "tests" / "models" / "tiny_fc.tflite").read_bytes()
    a = [mutate(data, np.random.default_rng(5)) for _ in range(3)]
    b = [mutate(data, np.random.default_rng(5)) for _ in range(3)]
    assert a == b and a[0] != data


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0, -0.5])
def test_a_broken_scale_is_named(value):
    """The fuzzer's first find in an earlier version: a NaN scale reached the multiplier maths."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "models" / "generate"))
    from tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", value, 0)
    w = b.constant("w", np.ones((4, 8), np.int8), scale=0.01)
    y = b.tensor("y", (1, 4), "int8", 0.1, 0)
    b.operator("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions")
    with pytest.raises(ModelError, match=r"tensor 0 'x': scale .* is not (a finite number|positive)"):
        compile_model(b.build([x], [y]))


def test_a_zero_point_outside_the_type_and_wrong_channel_counts_are_named():
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "models" / "generate"))
    from tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", 0.1, 300)
    w = b.constant("w", np.ones((4, 8), np.int8), scale=[0.01, 0.02, 0.03], axis=0)
    y = b.tensor("y", (1, 4), "int8", 0.1, 0)
    b.operator("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions")
    with pytest.raises(ModelError) as info:
        compile_model(b.build([x], [y]))
    message = str(info.value)
    assert "tensor 0 'x': zero point 300 is outside int8's range [-128, 127]" in message
    assert "tensor 1 'w': has 3 per-channel scales along axis 0, but that dimension has 4" in message


def test_fuzzer_finds_are_named():
    """Found by benchmarks/fuzz_models.py: a TRANSPOSE whose output lost its quantization ended
    in an AssertionError inside the check's own message."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "models" / "generate"))
    from tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 2, 4), "int8", 0.1, 0)
    y = b.tensor("y", (1, 4, 2), "int8")
    perm = b.constant("perm", np.array([0, 2, 1], np.int32))
    b.operator("TRANSPOSE", [x, perm], [y], "TransposeOptions")
    with pytest.raises(ModelError, match=r"op 0 TRANSPOSE: input is quantized but output 'y' has "
                                         r"no scale and zero point"):
        compile_model(b.build([x], [y]))


# Mutants that benchmarks/fuzz_models.py found once float32 and uint8 models joined it, each with
# the message it now gets (the file, the op and what is wrong in it).
FUZZ_FINDS = {
    # lstm_batch2_clip.tflite, mutant 2: the output state lost its dimensions (IndexError).
    "lstm_scalar_state.tflite": "op 0 UNIDIRECTIONAL_SEQUENCE_LSTM: output state 'tensor13' is a "
                                "scalar; TFLM's LSTM keeps it as [batches, units]",
    # math_unary.tflite, mutant 0: a NaN alpha, which has no C literal (ValueError).
    "leaky_relu_nan_alpha.tflite": "op 1 LEAKY_RELU: alpha is nan: the file is damaged",
    # lstm_s16_u8.tflite, mutant 1: a bit flip made an int64 gate bias ~2^63, and the C's int64
    # sum overflowed under UBSan (TFLM's would too).
    "lstm_s16_huge_bias.tflite": "op 0 UNIDIRECTIONAL_SEQUENCE_LSTM: bias 'input_bias' holds a "
                                 "value of magnitude 9,223,372,036,853,884,381",
    # reshape.tflite, mutant 0: a tensor type code of -128 reached the emitter (numpy TypeError).
    "reshape_bad_type.tflite": "has type code -128, not a TFLite tensor type",
    # maxpool_s16_3x3_same_s2.tflite, mutant 2 (the every-model run at the session's end): the
    # input grew to 1e9 x 32,700 rows and columns, and the empty-window check walked every
    # output (a hang); it now looks at the two ends only.
    "maxpool_huge_input.tflite": "op 0 MAX_POOL_2D: output 'PartitionedCall_1:0' has shape "
                                 "(1, 5, 5, 3), expected (1, 1065353221, 32700, 3)",
}


@pytest.mark.parametrize("name", sorted(FUZZ_FINDS))
def test_float_fuzzer_finds_are_refused_naming_the_op(name):
    path = Path(__file__).parent / "fuzz_finds" / name
    with pytest.raises(ModelError) as info:
        compile_model(path, prefix="found")
    assert str(info.value).startswith(f"{path}: ")
    assert FUZZ_FINDS[name] in str(info.value)


def test_a_variables_extreme_initial_value_saturates_without_warnings():
    """Found by the fuzzer: an infinite initial value (or one over float32 once divided by the
    scale) made numpy warn 'invalid value encountered in cast' on the user's terminal."""
    import warnings

    from microbuild.compiler.ops.variables import _quantize_like_tflm

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = _quantize_like_tflm(np.array([np.inf, -np.inf, 3e38, 0.25]), 1e-30, 0, "int8")
    assert values.tolist() == [127, -128, 127, 127]


def test_a_float_to_float_cast_in_place_builds_warning_free():
    """cast_s16_f32.tflite, mutant 1 (the second session-end fuzz run): its input became float32,
    so the CAST is a copy, planned in place; memcpy of a buffer onto itself broke gcc's -Werror
    (-Wrestrict). The copy is a memmove now; build_on_host compiles with -Werror and sanitizers."""
    found = Path(__file__).parent / "fuzz_finds" / "cast_f32_to_f32_in_place.tflite"
    binary, _ = build_on_host(found)
    assert binary.is_file()
