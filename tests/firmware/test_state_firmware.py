"""A stateful model's state in a firmware: its own section (.mb_state) in the region the board's
``memory.placement.state`` names (default: the workspace's), counted by the fit report, and reset
before the first run."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from elftools.elf.elffile import ELFFile

from microbuild import api
from microbuild.boards import load_board
from microbuild.firmware.fit import analyze_elf
from microbuild.compiler import compile_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm_many  # noqa: E402

MODEL = Path(__file__).resolve().parent.parent / "models" / "ops" / "svdf_s16_rank1_bias.tflite"


def _section(elf: Path, name: str):
    with open(elf, "rb") as f:
        s = ELFFile(f).get_section_by_name(name)
        return s["sh_addr"], s["sh_size"]


def test_state_has_its_section_in_the_fit_report_and_the_run_matches_tflm(tmp_path):
    build = api.build_firmware("mps2-an500", [str(MODEL)], tmp_path / "fw")
    state_bytes = compile_model(MODEL).state_bytes
    address, size = _section(build.elf, ".mb_state")
    assert size == state_bytes and build.size["totals"]["state"] == state_bytes
    sram = load_board("mps2-an500").regions["sram"]
    assert sram.origin <= address < sram.origin + sram.length
    result = api.run_firmware(build)
    x = np.load(build.elf.with_suffix(".input.npz"))
    want = run_tflm_many(MODEL, [[x[k] for k in x.files]])[0]
    assert np.array_equal(result.outputs[build.models[0]["prefix"]][0], want[0])


def test_placement_state_puts_the_state_where_the_board_says(tmp_path):
    board = tmp_path / "an500-psram-state.yaml"
    board.write_text("name: an500-psram-state\nextends: mps2-an500\n"
                     "memory:\n  placement:\n    state: psram\n")
    build = api.build_firmware(str(board), [str(MODEL)], tmp_path / "fw")
    address, size = _section(build.elf, ".mb_state")
    psram = load_board(str(board)).regions["psram"]
    assert psram.origin <= address < psram.origin + psram.length and size > 0
    report = analyze_elf(build.elf, load_board(str(board)))
    assert ".mb_state" in {c.section for c in report.region("psram").contributions}
    assert ".mb_state" not in {c.section for c in report.region("sram").contributions}
