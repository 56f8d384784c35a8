"""`microbuild tune` on a real (emulated) device: every candidate is checked against the
reference kernel's exact output and timed; the log's winner is the fastest correct candidate; a
build with --tuning runs the winners; the default heuristic is never the slowest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from microbuild import api, cli
from microbuild.boards import load_board
from microbuild.compiler import compile_model
from microbuild.compiler.variants import REFERENCE, Selection, Target, default_variant
from microbuild.tuning import TuningLog
from microbuild.tuning.on_device import check_candidate, copy_prefix, reference_tensors
from microbuild.tuning.tuner import plan_tuning

MODELS = Path(__file__).resolve().parent.parent / "models"
DS_CNN = MODELS / "ds_cnn.tflite"
RESNET8 = MODELS / "resnet8.tflite"


def _tune(board: str, models: list[Path], tmp_path: Path, capsys, repeat: int) -> dict:
    log = tmp_path / "tune.json"
    argv = ["tune", "--board", board, "--log", str(log), "-o", str(tmp_path / "fw"),
            "--repeat", str(repeat), "--json"]
    for m in models:
        argv += ["--model", str(m)]
    assert cli.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["signatures"], report
    return report


def _check_report(report: dict, log: TuningLog) -> None:
    for s in report["signatures"]:
        candidates = s["candidates"]
        assert candidates[0]["variant"] == REFERENCE and len(candidates) >= 2, s
        assert all(c["correct"] for c in candidates), s  # every shipped variant is exact
        fastest = min(candidates, key=lambda c: c["ticks"])
        assert s["best"] is not None
        if "ran slower whole" in s["why"]:  # step 8 took the model's choices back
            assert s["best"] == s["default"], s
        else:
            assert next(c for c in candidates if c["variant"] == s["best"])["ticks"] == \
                fastest["ticks"], s
        assert log.best(report["cpu"], s["signature"]) == s["best"]


def test_tune_on_the_host_then_build_with_the_log(tmp_path, capsys):
    report = _tune("host", [DS_CNN], tmp_path, capsys, repeat=5)
    log = TuningLog.load(tmp_path / "tune.json")
    _check_report(report, log)
    assert {e["board_kind"] for e in log.cpus["host"].values()} == {"host"}

    # The log drives compile: ops with a measured signature run its winner.
    model = compile_model(DS_CNN, prefix="m", selection=Selection(
        Target.of_board(load_board("host")), tuning=log))
    tuned = [e for e in model.ops if e["kernel_choice"] == "tuned"]
    assert tuned, model.ops
    for e in tuned:
        assert e["kernel"] == log.best("host", e["signature"])

    # The on-device check catches a candidate whose output differs from the reference's.
    board = load_board("host")
    plan = plan_tuning(board, [DS_CNN])
    stems = {str(DS_CNN): "ds_cnn"}
    with api.connect(board, Path(report["firmware"])) as dev:
        references = reference_tensors(dev, plan, stems, 0)
        measured = plan.measured[0]
        ins, outs = references[measured.signature]
        broken = [bytes([outs[0][0] ^ 1]) + outs[0][1:]] + outs[1:]
        candidate = measured.candidates[-1]
        check_candidate(dev, copy_prefix("ds_cnn", len(measured.candidates) - 1),
                        measured.position, ins, broken, candidate)
        assert candidate.correct is False
        assert "differs from the reference in 1 of" in candidate.problem


def test_tune_on_cortex_m7_and_the_default_is_never_the_slowest(tmp_path, capsys):
    report = _tune("mps2-an500", [DS_CNN, RESNET8], tmp_path, capsys, repeat=1)
    log = TuningLog.load(tmp_path / "tune.json")
    _check_report(report, log)
    # Step 8 ran both models whole, tuned and default; on the M7 the op-by-op winners win
    # whole too (exact under icount), so no choice went back.
    assert set(report["whole"]) == {"ds_cnn.tflite", "resnet8.tflite"}, report["whole"]
    for name, whole in report["whole"].items():
        assert whole["tuned"] < whole["default"], (name, whole)
    assert not any("ran slower whole" in note for note in report["notes"])
    board = load_board("mps2-an500")
    target = Target.of_board(board)
    plan = plan_tuning(board, [DS_CNN, RESNET8])
    defaults = {}
    for m in plan.measured:
        from microbuild.compiler.fusion import fuse_conv_add
        from microbuild.compiler.ops import REGISTRY
        from microbuild.model.reader import read_model

        graph = fuse_conv_add(read_model(m.model))
        op = graph.operators[m.position]
        defaults[m.signature] = default_variant(REGISTRY[op.opcode], op, graph, target)
    for s in report["signatures"]:
        ticks = {c["variant"]: c["ticks"] for c in s["candidates"]}
        default = ticks[defaults[s["signature"]]]
        # Under icount the timings are exact: the default never loses to the reference, and
        # where the candidates differ it is not the slowest of them.
        assert default <= ticks[REFERENCE], s
        if len(set(ticks.values())) > 1:
            assert default < max(ticks.values()), s

    # A firmware built with the log runs each op's winner.
    build = api.build_firmware("mps2-an500", [DS_CNN], tmp_path / "tuned", executor="rpc",
                               tuning=tmp_path / "tune.json")
    for e in build.models[0]["ops"]:
        if e["kernel_choice"] == "tuned":
            assert e["kernel"] == log.best("cortex-m7", e["signature"])
    assert any(e["kernel_choice"] == "tuned" for e in build.models[0]["ops"])


def test_candidates_that_do_not_fit_one_firmware_are_split_over_several(tmp_path, monkeypatch):
    """A tuning firmware that does not fit is rebuilt with fewer copies per firmware, each with
    the reference copy; every candidate is still checked and timed, and the log is whole."""
    from microbuild.errors import FitError
    from microbuild.tuning import tuner

    built = []
    real_build = tuner._build_batch

    def build_batch(board, plan, stems, batch, out, toolchain):
        built.append(list(batch))
        if len(batch) > 2:  # stands in for a flash region that holds only two copies
            raise FitError("region 'flash' overflows by 1234 bytes")
        return real_build(board, plan, stems, batch, out, toolchain)

    monkeypatch.setattr(tuner, "_build_batch", build_batch)
    lines: list[str] = []
    report = tuner.tune(load_board("mps2-an500"), [DS_CNN], tmp_path / "tune.json",
                        out_dir=tmp_path / "fw", trials=3, repeat=1, progress=lines.append)
    assert built == [[0, 1, 2], [0, 1], [0, 2]]
    assert any("trying 2 per firmware" in line for line in lines), lines
    assert (tmp_path / "fw" / "1").is_dir() and (tmp_path / "fw" / "2").is_dir()
    log = TuningLog.load(tmp_path / "tune.json")
    conv = [m for m in report.measured if len(m.candidates) == 3]
    assert conv, [m.signature for m in report.measured]
    for m in report.measured:
        assert all(c.correct and c.ticks for c in m.candidates), m
        assert m.best.ticks == min(c.ticks for c in m.candidates)
        assert log.best("cortex-m7", m.signature) == m.best.variant


def test_tuning_plans_the_ops_as_they_are_compiled():
    """The tuner forces variants by op position and keys its log by op signature, both as the
    compiler numbers and rewrites the graph: TFLM micro_speech's one-channel depthwise is a
    CONV_2D with candidates by then, and a model of custom operators (the audio front end) is
    planned at all."""
    shared = Path(__file__).resolve().parents[3] / "shared" / "models"
    board = load_board("mps2-an500")
    speech = shared / "micro_speech_quantized.tflite"
    if not speech.is_file():
        pytest.skip(f"{speech} is not here: the real models folder ../shared/models exists in "
                    "microbuild's CI, not in every clone")
    plan = plan_tuning(board, [speech, shared / "audio_preprocessor_int8.tflite"])
    compiled = compile_model(speech, selection=Selection(Target.of_board(board))).summary()
    measured = {m.position: m for m in plan.measured if m.model == str(speech)}
    assert measured[1].opcode == "CONV_2D" and REFERENCE in \
        [c.variant for c in measured[1].candidates] and len(measured[1].candidates) >= 2
    for position, m in measured.items():
        assert compiled["ops"][position]["opcode"] == m.opcode
        assert compiled["ops"][position]["signature"] == m.signature


def test_a_model_slower_whole_when_tuned_keeps_its_default_kernels(tmp_path, monkeypatch):
    """Step 8: where the op-by-op winners make the whole model slower (as row streaming can on
    the M55), the model's signatures go back to their defaults, in the report and the log, and
    the tuned firmware is then the default one."""
    from microbuild.tuning import tuner

    real_time_whole = tuner._time_whole

    def slower_when_tuned(build, board, prefixes, *args):
        ticks, outputs = real_time_whole(build, board, prefixes, *args)
        return {p: t + (1_000_000 if p.endswith("_tuned") else 0)
                for p, t in ticks.items()}, outputs

    monkeypatch.setattr(tuner, "_time_whole", slower_when_tuned)
    lines: list[str] = []
    report = tuner.tune(load_board("mps2-an500"), [DS_CNN], tmp_path / "tune.json",
                        out_dir=tmp_path / "fw", trials=3, repeat=1, progress=lines.append)
    assert "ds_cnn.tflite" in report.whole, lines
    whole = report.whole["ds_cnn.tflite"]
    assert whole["tuned"] > whole["default"]  # the real tuned run plus the stand-in 1,000,000
    note = next(n for n in report.notes if "ran slower whole" in n)
    assert "ds_cnn.tflite" in note and "keep the default kernels" in note
    log = TuningLog.load(tmp_path / "tune.json")
    reverted = [m for m in report.measured if m.why]
    assert reverted, [(m.signature, m.default, m.fastest) for m in report.measured]
    for m in report.measured:
        assert m.best.variant == m.default, m.signature
        assert log.best("cortex-m7", m.signature) == m.default
    for m in reverted:
        assert m.fastest.variant != m.default and "ran slower whole" in m.why
    assert report.flash_growth == 0
