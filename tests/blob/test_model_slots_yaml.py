"""memory.placement.model_slots in a board YAML: where a table-executor firmware reads model
blobs. Each slot must lie inside its region, be 16-byte aligned and not share bytes with the
other; the loader says which slot, where, and by how many bytes."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from microbuild import api
from microbuild.errors import MicrobuildError
from microbuild.firmware.table import build_table_firmware

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "boards"))
from test_boards import GOOD, problems_of  # noqa: E402

PLACEMENT = ("  placement: {text: flash, rodata: flash, weights: flash, data: ram, bss: ram, "
             "stack: ram, heap: ram, workspace: ram}")
assert PLACEMENT in GOOD


def _with_slots(slots: str) -> str:
    return GOOD.replace(
        "    ram: {origin: 0x20000000, length: 64K, access: rwx}",
        "    ram: {origin: 0x20000000, length: 64K, access: rwx}\n"
        "    qspi: {origin: 0x90000000, length: 1M, access: rx}").replace(
        PLACEMENT, PLACEMENT[:-1] + f", model_slots: {slots}}}")


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


TWO_SLOTS = "[{region: qspi, size: 512K}, {region: qspi, offset: 512K, size: 512K}]"


def _slots_file() -> Path:
    path = Path("defs") / "myboard.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(_with_slots(TWO_SLOTS)).lstrip("\n"))
    return path


def test_two_slots_are_read_as_addresses_and_sizes(tmp_path):
    assert problems_of(tmp_path, _with_slots(TWO_SLOTS)) == []
    board = api.load_board_file(tmp_path / "defs" / "myboard.yaml")
    assert [(s.region, s.address, s.size) for s in board.model_slots] == [
        ("qspi", 0x90000000, 512 * 1024), ("qspi", 0x90080000, 512 * 1024)]
    assert "model_slots" not in board.placement  # sections' regions only


@pytest.mark.parametrize("slots, message", [
    ("[{region: qspi, size: 768K}, {region: qspi, offset: 512K, size: 512K}]",
     "memory.placement.model_slots[1]: model slot 1 [0x90080000, 0x90100000) overlaps model slot "
     "0 [0x90000000, 0x900c0000): give each its own bytes (offset)"),
    ("[{region: qspi, offset: 768K, size: 512K}]",
     "memory.placement.model_slots[0]: model slot 0 [0x900c0000, 0x90140000) ends 262,144 bytes "
     "past region 'qspi' (1,048,576 bytes): make it smaller or move it (offset)"),
    ("[{region: qpsi, size: 1K}]",
     "memory.placement.model_slots[0].region: model slot 0 is in 'qpsi', which is not a region "
     "here (did you mean qspi?); regions: flash, ram, qspi"),
    ("[{region: qspi, offset: 8, size: 1K}]",
     "memory.placement.model_slots[0].offset: model slot 0 starts at 0x90000008, not 16-byte "
     "aligned: blobs must be (their weights are read 16 bytes at a time)"),
])
def test_a_bad_slot_is_refused_naming_it(tmp_path, slots, message):
    (problem,) = problems_of(tmp_path, _with_slots(slots))
    assert problem.endswith(message), problem


def test_the_table_executor_on_a_board_without_slots_says_what_to_add(tmp_path):
    with pytest.raises(MicrobuildError, match=r"board mps2-an385 has no model slots .* add "
                                              r"memory.placement.model_slots to its YAML"):
        build_table_firmware("mps2-an385", ["unused.tflite"], tmp_path)


def test_a_slot_over_the_firmware_sections_is_refused_once_linked():
    from microbuild.firmware.table import _check_slots_clear_of_sections

    board = api.load_board_file(_slots_file())
    # What the fit report says of a link whose .rodata reaches into slot 1 (0x90080000 on).
    size = {"regions": [{"name": "qspi", "contributions": [
        {"section": ".rodata", "bytes": 0x8000, "address": 0x900f8000, "role": "run"}]}]}
    with pytest.raises(MicrobuildError, match=r"model slot 1 \[0x90080000, 0x90100000\) overlaps "
                                              r"the firmware's .rodata \[0x900f8000, 0x90100000\) "
                                              r"in region qspi"):
        _check_slots_clear_of_sections(board, size)
    size["regions"][0]["contributions"][0]["address"] = 0x90100000  # just past slot 1
    _check_slots_clear_of_sections(board, size)


def test_a_board_shrinking_an_inherited_slots_region_is_told_it_may_drop_the_slots(tmp_path):
    """mps2-an500's slots are two 1 MiB ranges of its PSRAM; a board extending it with an 8 KiB
    PSRAM (the workspace-split tests make one) no longer holds them. The problem names the
    built-in file's line and the user's own file, and `model_slots: []` there drops them."""
    shrunk = ("name: myboard\nextends: mps2-an500\nmemory:\n  regions:\n"
              "    psram: {origin: 0x60000000, length: 8K, access: rwx}\n")
    problems = problems_of(tmp_path, shrunk)
    assert len(problems) == 2, problems
    for slot, problem in enumerate(problems):
        assert f"mps2-an500.yaml:{18 + slot}: memory.placement.model_slots[{slot}]" in problem
        assert problem.endswith("or drop the slots: memory.placement.model_slots: [] in "
                                f"{tmp_path / 'defs' / 'myboard.yaml'}"), problem
    dropped = shrunk + "  placement:\n    model_slots: []\n"
    assert problems_of(tmp_path, dropped) == []
    assert api.load_board_file(tmp_path / "defs" / "myboard.yaml").model_slots == []
