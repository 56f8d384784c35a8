"""Kernel variants on the host: every portable variant of every operator, forced onto every sweep
model it accepts, equals TFLM bit for bit (gcc and clang, ASan+UBSan); and the choice of variant
follows the CPU (never a variant the CPU cannot run), forced choices and the tuning log.

The Arm DSP and Helium variants cannot run here; tests/firmware/test_variants_qemu.py runs them
(and these) in QEMU."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_support import assert_bit_exact

from microbuild.boards import available_boards, load_board
from microbuild.compiler import compile_model, lowered_graph
from microbuild.compiler.ops import REGISTRY
from microbuild.compiler.variants import REFERENCE, Selection, Target, cpu_features
from microbuild.errors import ModelError

HERE = Path(__file__).resolve().parent
SWEEP = sorted((HERE.parent / "models" / "ops").glob("*.tflite"))
MODELS = sorted((HERE.parent / "models").glob("*.tflite"))
FLOAT_SWEEP = sorted((HERE.parent / "models" / "float").glob("*.tflite"))
HOST = Target()  # a generic CPU: portable variants only


def _lowered_graph(path: Path):
    """The graph as compile_model lowers it (e.g. a one-channel depthwise is a CONV_2D by
    then), or None for the few sweep models microbuild refuses on purpose."""
    try:
        return lowered_graph(path)
    except Exception:
        return None


def _cases() -> list[tuple[str, str, Path]]:
    """(opcode, variant, sweep model) for every portable variant and every sweep model holding an
    op it accepts; the reference for every sweep model holding an op that has variants."""
    cases = []
    for path in SWEEP:
        graph = _lowered_graph(path)
        if graph is None:
            continue
        for op in graph.operators:
            lowering = REGISTRY.get(op.opcode)
            if lowering is None or not lowering.variants:
                continue
            kop = lowering.kernel_op(op)
            names = [REFERENCE] + [v.name for v in lowering.variants
                                   if not v.features and v.accepts_op(kop, graph)]
            for name in names:
                case = (kop.opcode, name, path)
                if case not in cases:
                    cases.append(case)
    return cases


CASES = _cases()


def test_every_declared_variant_is_exercised():
    """A variant no sweep model reaches would ship untested: each one, on some sweep model (the
    float sweep's for the float variants, tests/compiler/test_float_reorder.py)."""
    reached = set()
    for path in SWEEP + FLOAT_SWEEP:
        graph = _lowered_graph(path)
        if graph is None:
            continue
        for op in graph.operators:
            lowering = REGISTRY.get(op.opcode)
            for variant in (lowering.variants if lowering else ()):
                if variant.accepts_op(lowering.kernel_op(op), graph):
                    reached.add((variant.opcode, variant.name))
    declared = {(v.opcode, v.name) for lowering in REGISTRY.values() for v in lowering.variants}
    assert declared <= reached, f"variants no sweep model exercises: {sorted(declared - reached)}"


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("opcode, variant, path", CASES,
                         ids=[f"{o}-{v}-{p.stem}" for o, v, p in CASES])
def test_variant_bit_exact_with_tflm(opcode, variant, path, cc, tmp_path):
    assert_bit_exact(path, n=6, seed=3, cc=cc, tmp_path=tmp_path, variants={opcode: variant})


# ---- choosing ----------------------------------------------------------------------------------
def test_cpu_features_follow_the_architecture():
    assert cpu_features({"arch": "armv7e-m", "core": "cortex-m7"}) == {"dsp"}
    assert cpu_features({"arch": "armv7-m", "core": "cortex-m3"}) == frozenset()
    assert cpu_features({"arch": "armv8.1-m.main", "core": "cortex-m55"}) == {"dsp", "mve"}
    assert cpu_features({"arch": "rv32imac", "core": "rv32"}) == {"rv32"}
    assert cpu_features({"arch": "armv8-m.main", "core": "cortex-m33",
                         "features": ["dsp"]}) == {"dsp"}
    assert cpu_features({"arch": "armv7e-m", "core": "cortex-m4",
                         "features": ["-dsp"]}) == frozenset()


@pytest.mark.parametrize("board", sorted(available_boards()))
def test_no_board_gets_a_variant_its_cpu_cannot_run(board):
    b = load_board(board)
    target = Target.of_board(b)
    for path in MODELS:
        model = compile_model(path, prefix="m", selection=Selection(target))
        for entry in model.ops:
            lowering = REGISTRY[entry["opcode"]]
            variant = next((v for v in lowering.variants if v.name == entry["kernel"]), None)
            if variant is not None:
                assert variant.features <= target.features, (board, path.name, entry)


def test_forcing_a_variant_the_cpu_lacks_is_a_clear_error():
    dsp = next((v for lowering in REGISTRY.values() for v in lowering.variants
                if "dsp" in v.features and v.opcode == "CONV_2D"), None)
    if dsp is None:
        pytest.fail("no CONV_2D variant needs the DSP extension")
    with pytest.raises(ModelError, match=rf"variant '{dsp.name}' cannot run .* on cortex-m3"):
        compile_model(HERE.parent / "models" / "ds_cnn.tflite", prefix="m", selection=Selection(
            Target("cortex-m3", frozenset()), force={"CONV_2D": dsp.name}))
    with pytest.raises(ModelError, match="no kernel variant 'nonsense' for CONV_2D; known: "
                                         "reference"):
        compile_model(HERE.parent / "models" / "ds_cnn.tflite", prefix="m",
                      selection=Selection(force={"CONV_2D": "nonsense"}))


def test_reference_everywhere_and_default_choices_are_recorded():
    path = HERE.parent / "models" / "ds_cnn.tflite"
    reference = compile_model(path, prefix="m", selection=Selection(force={"*": REFERENCE}))
    assert {e["kernel"] for e in reference.ops} == {REFERENCE}
    m7 = compile_model(path, prefix="m", selection=Selection(
        Target.of_board(load_board("mps2-an500"))))
    conv = [e for e in m7.ops if e["opcode"] == "CONV_2D"]
    assert all(e["kernel_choice"] == "default" for e in conv)
    assert all(e["kernel"] != REFERENCE for e in conv), conv
    assert m7.summary()["target"] == {"cpu": "cortex-m7", "features": ["dsp"]}


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500", "mps3-an547"])
def test_16x8_convolutions_and_fully_connected_get_the_dsp_variant(board):
    """16x8 models (int16 activations) get the SMLALD variants on DSP cores, and on the M55 the
    Helium CONV_2D (VMLALDAVA, mve_s16); int8 variants never bind to them
    (tests/firmware/test_variants_qemu.py runs them against TFLM)."""
    target = Target.of_board(load_board(board))
    ops = HERE.parent / "models" / "ops"
    for name, opcode in (("fc_s16_relu", "FULLY_CONNECTED"), ("fc_s16_nobias", "FULLY_CONNECTED"),
                         ("conv_s16_3x3_same_relu", "CONV_2D"),
                         ("conv_s16_5x3_valid_s2", "CONV_2D")):
        summary = compile_model(ops / f"{name}.tflite", prefix="m",
                                selection=Selection(target)).summary()
        kernels = {op["opcode"]: op["kernel"] for op in summary["ops"]}
        want = "mve_s16" if board == "mps3-an547" and opcode == "CONV_2D" else "dsp_s16"
        assert kernels[opcode] == want, (name, kernels)
    m3 = Target.of_board(load_board("mps2-an385"))
    summary = compile_model(ops / "fc_s16_relu.tflite", prefix="m",
                            selection=Selection(m3)).summary()
    assert summary["ops"][0]["kernel"] == REFERENCE


def test_an_op_with_no_variant_for_its_type_reports_its_only_kernel():
    """An int32 ADD has no variant (they are int8/int16): its reference kernel is its only
    kernel, not a fallback (the kernels benchmark counts fallbacks)."""
    selection = Selection(target=Target.of_board(load_board("mps2-an500")))
    summary = compile_model(HERE.parent / "models" / "ops" / "add_s32_broadcast.tflite",
                            selection=selection).summary()
    (add,) = [op for op in summary["ops"] if op["opcode"] == "ADD"]
    assert add["kernel"] == "reference" and add["kernel_choice"] == "only kernel"
    assert not add.get("variants_refused")
