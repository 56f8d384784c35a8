"""Choosing variants within a flash budget (microbuild/tuning/costs.py), on measurements written
out by hand, and the per-op cost read from a generated model."""

from __future__ import annotations

from pathlib import Path

import pytest

from microbuild.compiler import compile_model
from microbuild.errors import MicrobuildError
from microbuild.tuning.costs import (choose_within, growth, op_costs, parse_max_flash,
                                     total_growth, weights_arrays)
from microbuild.tuning.tuner import Candidate, Measured

DS_CNN = Path(__file__).resolve().parent.parent / "models" / "ds_cnn.tflite"


def _measured(name: str, also: int, *candidates: tuple[str, int, int]) -> Measured:
    """candidates: (variant, ticks, flash); the default kernel is the second one."""
    return Measured(name, "CONV_2D", "m.tflite", 0, also=also, default=candidates[1][0],
                    candidates=[Candidate(v, ticks, True, flash=flash, scratch=0)
                                for v, ticks, flash in candidates])


def _two_signatures() -> list[Measured]:
    return [
        # The fastest (wide) grows each of 2 ops by 1,000 bytes and saves 400 ticks per op.
        _measured("a", 1, ("reference", 1000, 900), ("dsp", 600, 1000), ("wide", 400, 2000)),
        # The fastest (wide) grows 1 op by 100 bytes and saves 50 ticks.
        _measured("b", 0, ("reference", 300, 1100), ("dsp", 200, 1000), ("wide", 150, 1100)),
    ]


def test_without_a_budget_the_fastest_wins():
    measured = _two_signatures()
    chosen = choose_within(measured, None)
    assert {k: c.variant for k, c in chosen.items()} == {"a": "wide", "b": "wide"}
    assert total_growth(measured, chosen) == 2 * 1000 + 100


def test_a_zero_budget_keeps_variants_whose_weights_do_not_grow():
    measured = _two_signatures()
    chosen = choose_within(measured, 0)
    assert {k: c.variant for k, c in chosen.items()} == {"a": "dsp", "b": "dsp"}
    assert all(growth(m, chosen[m.signature]) <= 0 for m in measured)


def test_a_budget_buys_the_most_ticks_per_byte_first():
    measured = _two_signatures()
    # 100 bytes buy b's upgrade (50 ticks for 100 bytes) but not a's (2 x 200 ticks, 2,000 B).
    assert {k: c.variant for k, c in choose_within(measured, 100).items()} == {
        "a": "dsp", "b": "wide"}
    # b's upgrade saves 0.5 ticks per byte, a's 0.2: b is bought first, and then a's 2,000
    # bytes no longer fit 2,000; they fit 2,100.
    chosen = choose_within(measured, 2000)
    assert {k: c.variant for k, c in chosen.items()} == {"a": "dsp", "b": "wide"}
    assert total_growth(measured, chosen) == 100
    chosen = choose_within(measured, 2100)
    assert {k: c.variant for k, c in chosen.items()} == {"a": "wide", "b": "wide"}


def test_wrong_or_unfit_candidates_are_never_chosen():
    m = _measured("a", 0, ("reference", 1000, 900), ("dsp", 600, 1000), ("wide", 400, 900))
    m.candidates[2].correct = False
    assert choose_within([m], None)["a"].variant == "dsp"
    assert choose_within([m], 0)["a"].variant == "dsp"


@pytest.mark.parametrize("text, default, want", [
    ("0", 0, 0), ("4096", 0, 4096), ("16k", 0, 16384), ("2KiB", 0, 2048), ("1M", 0, 1 << 20),
    ("10%", 50000, 5000), ("0%", 50000, 0)])
def test_max_flash_takes_bytes_or_a_percentage(text, default, want):
    assert parse_max_flash(text, default) == want


def test_a_bad_max_flash_says_what_to_write():
    with pytest.raises(MicrobuildError, match="give bytes"):
        parse_max_flash("lots", 100)


def test_an_ops_cost_is_the_weights_it_reads_and_its_scratch(tmp_path):
    model = compile_model(DS_CNN, prefix="kws")
    model.write(tmp_path)
    (tmp_path / "kws.json").write_text(model.summary_json())
    arrays = weights_arrays((tmp_path / "kws_weights.c").read_text())
    # Every op's arrays together are the model's weights (no constant is read by two ops here).
    total = sum(op_costs(tmp_path, "kws", position)[0] for position in range(len(model.ops)))
    assert total == sum(arrays.values()) == model.weights_bytes
    flash, scratch = op_costs(tmp_path, "kws", 0)
    assert flash > 2560  # the 64x10x4x1 filter and more
    assert scratch == model.ops[0]["scratch_bytes"]
